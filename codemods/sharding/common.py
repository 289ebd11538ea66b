"""What the sharding rules share: whether a file shards its model already, the guides their
messages cite, the imports they add, and how a converted statement keeps XLA608 off it."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule import Import, Rule, dotted_name, subtree, words

SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"
FSDPV2_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdpv2.html"

XS = Import("torch_xla.distributed.spmd", asname="xs")
NP = Import("numpy", asname="np")
FSDPV2 = Import("torch_xla.experimental.spmd_fully_sharded_data_parallel", "SpmdFullyShardedDataParallel", "FSDPv2")
XLA_WRAP = Import("torch_xla.distributed.fsdp.wrap", asname="xla_wrap")
FUNCTOOLS = Import("functools")

# The modules whose use makes a file one that shards its model
SHARDING_MODULES = ("torch.distributed.fsdp", "torch.distributed._composable.fsdp", "torch.distributed.device_mesh")
TRIGGER = words("fsdp", "device_mesh", "fully_shard", "init_device_mesh")
# Parallelism without an SPMD form here yet: a file that uses one keeps all its sharding flagged
# (XLA608), never half-converted
UNCONVERTED = (
    "torch.distributed.rpc",
    "torch.distributed.pipelining",
    "torch.distributed.pipeline",
    "torch.distributed.tensor",
    "torch.distributed._tensor",
)
# Processes started or replicated by the script: one SPMD program cannot be part of them. A sharded
# script launched by mp.spawn (PyTorch's FSDP tutorial) stays flagged until its launcher has an
# SPMD form (the worker called once, in the one process)
MULTIPROCESS = (
    "torch.multiprocessing.spawn",
    "torch.multiprocessing.start_processes",
    "torch_xla.launch",
    "torch_xla.distributed.xla_multiprocessing.spawn",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
DESTROY_PROCESS_GROUP = "torch.distributed.destroy_process_group"
INIT_DEVICE_MESH = ("torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh")


class ShardingRule(Rule):
    """A rule of this family: it acts only in a file that shards its model and sets its processes
    up (decided once a file: it imports FSDP, FSDP2 or a device mesh, and calls
    ``init_process_group`` or ``init_device_mesh``, which become the SPMD set-up), and uses no
    parallelism without an SPMD form here (RPC, pipelines, DTensor's tensor parallelism) and
    starts or replicates no processes (``mp.spawn``, ``torch_xla.launch``, DDP), under
    the targets where SPMD is the script's form. A module that only wraps (a trainer library
    whose script joins the group) stays flagged (XLA608): without ``xr.use_spmd()`` FSDPv2 fails."""

    TARGETS = ("single", "spmd")
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (TRIGGER,)
    WHOLE_MODULE = True  # what a statement becomes depends on the file's other statements

    def visit_Module(self, node: cst.Module) -> None:
        if "shards" not in self.ctx.shared:
            names, calls = [], []
            for statement in subtree(node):
                if isinstance(statement, (cst.Import, cst.ImportFrom)):
                    self.ctx.learn_import(statement)
                    names += _imported(statement)
                elif isinstance(statement, cst.Call):
                    calls.append(statement.func)
            self.ctx.shared["shards"] = (
                any(name.startswith(SHARDING_MODULES) or name in INIT_DEVICE_MESH for name in names)
                and not any(name.startswith(UNCONVERTED) for name in names)
                and any(f.rsplit(".", 1)[-1] in self.ctx.source for f in (INIT_PROCESS_GROUP, *INIT_DEVICE_MESH))
                and not any(self.ctx.qualname(func) in MULTIPROCESS for func in calls)
            )
        self.shards = self.ctx.shared["shards"]

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


def _imported(statement: cst.Import | cst.ImportFrom) -> list[str]:
    """The qualified names an import statement binds."""
    if isinstance(statement.names, cst.ImportStar):
        return [dotted_name(statement.module)] if statement.module is not None else []
    if isinstance(statement, cst.Import):
        return [dotted_name(alias.name) for alias in statement.names]
    module = dotted_name(statement.module) if statement.module is not None else ""
    return [f"{module}.{dotted_name(alias.name)}" for alias in statement.names]
