"""XLA620: the process group of a script that shards its model becomes one SPMD program."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, SetupRule, imports_behind
from codemods.shared.sharded_models import DESTROY_PROCESS_GROUP, INIT_DEVICE_MESH, INIT_PROCESS_GROUP
from migrate_xla.rule.api import XR, names_trigger

SETUP = "xr.use_spmd()"
FSDP_MESH = 'xs.set_global_mesh(xs.get_1d_mesh("fsdp"))'


class SpmdProcessGroup(SetupRule):
    """``init_process_group(...)`` becomes ``xr.use_spmd()`` and a global mesh with an ``fsdp`` axis;
    ``destroy_process_group()`` goes.

    SPMD user guide: one process drives every device, so there is no process group to join,
    and ``xr.use_spmd()`` must run before anything uses the XLA runtime: it goes first in the
    script's ``__main__`` block (after the imports in a flat script; where the group was joined in a
    module whose run starts elsewhere), codemods/shared/spmd_start.py. The mesh, ``xs.get_1d_mesh("fsdp")`` over all
    ``xr.global_runtime_device_count()`` devices, is the one FSDPv2 shards over (it requires an
    axis named ``fsdp``, FSDP via SPMD); a script that builds its own mesh with
    ``init_device_mesh`` gets that one instead (XLA623), with ``xr.use_spmd()`` from here.
    Ranks and world sizes the script still reads are XLA604's: ``xr.global_ordinal()`` is 0 and
    ``xr.world_size()`` is 1 in SPMD, so a script that slices its batch by rank reads the global
    batch, which the shardings split.
    """

    CODE = "XLA620"
    NAME = "spmd-process-group"
    SUMMARY = (
        "in a script that shards its model (FSDP, FSDP2), init_process_group becomes xr.use_spmd() and an 'fsdp' mesh"
    )
    FIX = "safe"
    REQUIRES = (
        *SetupRule.REQUIRES,
        names_trigger(INIT_PROCESS_GROUP, DESTROY_PROCESS_GROUP),
    )
    BEFORE = (
        "import torch.distributed as dist\nfrom torch.distributed.fsdp import fully_shard\n\n"
        'dist.init_process_group("nccl")\nfully_shard(model)\ndist.destroy_process_group()\n'
    )
    AFTER = (
        "from torch.distributed.fsdp import fully_shard\n\n"
        'xr.use_spmd()\nxs.set_global_mesh(xs.get_1d_mesh("fsdp"))\nfully_shard(model)\n'
    )

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, name):
        self.ctx.forget_fixes_inside(original)
        if name == DESTROY_PROCESS_GROUP:
            return self.replace(
                original,
                updated,
                cst.RemovalSentinel.REMOVE,
                "SPMD has no process group to destroy: removed",
                drop_if_unused=imports_behind(self, original),
            )
        own_mesh = any(n.rsplit(".", 1)[-1] in self.ctx.source for n in INIT_DEVICE_MESH)  # XLA623's
        lines = ([] if self.at_start else [SETUP]) + ([] if own_mesh else [FSDP_MESH])
        self.started = self.started or self.at_start
        if not lines:
            return self.replace(
                original,
                updated,
                cst.RemovalSentinel.REMOVE,
                f"the process group becomes one SPMD program: `xr.use_spmd()` at the start of the script ({SPMD_GUIDE})",
                drop_if_unused=imports_behind(self, original),
            )
        statements = [cst.parse_statement(code) for code in lines]
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        return self.replace(
            original,
            updated,
            cst.FlattenSentinel(statements),
            "the process group becomes one SPMD program: "
            + ("`xr.use_spmd()` at the start of the script" if self.at_start else "`xr.use_spmd()` here")
            + ("" if own_mesh else ", and a global mesh with an `fsdp` axis over every device")
            + f" ({SPMD_GUIDE})",
            imports=[XR] if own_mesh else [XR, XS],
            drop_if_unused=imports_behind(self, original),
        )

    def plan(self, statement: cst.SimpleStatementLine) -> str | None:
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call):
            return None
        name = self.qualname(call.func)
        return name if name in (INIT_PROCESS_GROUP, DESTROY_PROCESS_GROUP) else None
