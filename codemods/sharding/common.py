"""What the sharding rules share: the base classes (a rule acts only where the file shards its
model: codemods/shared/sharded_models.py), the guides their messages cite, the imports they add,
and how a converted statement keeps XLA608 off it."""

from __future__ import annotations

import libcst as cst

from codemods.shared.sharded_models import (
    shards_its_model,
)
from migrate_xla.rule import Import, Rule, subtree, words

SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"
FSDPV2_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdpv2.html"
TRIGGER = words("fsdp", "device_mesh", "fully_shard", "init_device_mesh")

XS = Import("torch_xla.distributed.spmd", asname="xs")
NP = Import("numpy", asname="np")
FSDPV2 = Import("torch_xla.experimental.spmd_fully_sharded_data_parallel", "SpmdFullyShardedDataParallel", "FSDPv2")
XLA_WRAP = Import("torch_xla.distributed.fsdp.wrap", asname="xla_wrap")
FUNCTOOLS = Import("functools")


class ShardingRule(Rule):
    """A rule of this family: it acts only in a file that shards its model and sets its processes
    up (decided once a file: it imports FSDP, FSDP2 or a device mesh, and calls
    ``init_process_group`` or ``init_device_mesh``, which become the SPMD set-up), and uses no
    parallelism without an SPMD form here (RPC, pipelines, DTensor and the tensor-parallel styles XLA625 does not convert) and
    starts or replicates no processes (``mp.spawn``, ``torch_xla.launch``, DDP), under
    the targets where SPMD is the script's form. A module that only wraps (a trainer library
    whose script joins the group) stays flagged (XLA608): without ``xr.use_spmd()`` FSDPv2 fails."""

    TARGETS = ("single", "spmd")
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (TRIGGER,)
    WHOLE_MODULE = True  # what a statement becomes depends on the file's other statements

    def visit_Module(self, node: cst.Module) -> None:
        self.shards = shards_its_model(self, node)

    def claim(self, statement: cst.CSTNode | None) -> None:
        """Keep XLA608's "no XLA form" TODO off a statement this family converts: XLA608 flags
        no statement that holds a TODO entry already, and an empty entry writes no comment."""
        if statement is not None:
            self.ctx.todos.setdefault(id(statement), [])
            self.ctx.held_back.setdefault(id(statement), False)


class StatementRule(ShardingRule):
    """A rule of this family that converts whole statements: ``plan`` says what it makes of one
    (None: not one of its), read from the original; XLA608 is kept off each statement it plans
    for (``claim``), and ``convert`` writes the statement it becomes."""

    def plan(self, statement: cst.SimpleStatementLine):
        raise NotImplementedError

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        raise NotImplementedError

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.shards and self.plan(node) is not None:
            self.claim(node)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        plan = self.plan(original) if self.shards else None
        return updated if plan is None else self.convert(original, updated, plan)


def imports_behind(rule: Rule, node: cst.CSTNode) -> list[Import]:
    """The imports behind every name in ``node``: what a fix that replaced it may leave unused."""
    return [spec for n in subtree(node) if isinstance(n, cst.Name) for spec in rule.ctx.import_behind(n)]
