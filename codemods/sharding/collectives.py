"""XLA627: the collectives a sharded script calls on its process group, in the one SPMD program."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, StatementRule, imports_behind
from migrate_xla.rule.api import call_arg, code_of, names_trigger, snippet

# Each is the identity over one process: what the one SPMD program holds is the whole already
IDENTITIES = {
    "torch.distributed.all_reduce": "its reduction over one process is the tensor itself",
    "torch.distributed.reduce": "its reduction over one process is the tensor itself",
    "torch.distributed.broadcast": "the one process is its source",
    "torch.distributed.barrier": "one process waits for no other",
    "torch.distributed.monitored_barrier": "one process waits for no other",
}
# What they are given besides the tensor and the operation, which keeps the call's meaning
KEPT_KEYWORDS = frozenset({"tensor", "op", "src", "dst", "timeout", "device_ids", "wait_all_ranks"})


class SpmdCollectives(StatementRule):
    """``dist.all_reduce(t)``, ``reduce``, ``broadcast`` and ``barrier`` of the default group go.

    SPMD user guide: one process drives every device, as process 0 of 1 (its process group is
    the SPMD set-up, XLA620; a spawned worker is called once, XLA601), and what it computes are
    whole tensors: the sum PyTorch's FSDP tutorial all-reduces over its ranks (``ddp_loss``, each
    rank's part of the loss) is already the global batch's in the one program. So each of these
    calls, a statement of its own on the default group, is removed: over one process a reduction
    is the tensor itself, a broadcast's source is the process, a barrier waits for no other. Left
    as written it would raise, the process group it asks for being gone. A call on a group of
    its own (``group=``), not waited for (``async_op=True``, whose work the script keeps) or not a
    statement of its own is flagged: the one program has no process groups to run it on.
    """

    CODE = "XLA627"
    NAME = "spmd-collectives"
    SUMMARY = "in a script that shards its model, all_reduce, reduce, broadcast and barrier of the default group go"
    FIX = "safe"
    REQUIRES = (
        *StatementRule.REQUIRES,
        names_trigger(*IDENTITIES),
    )
    BEFORE = (
        "import torch.distributed as dist\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n"
        'dist.init_process_group("nccl")\nmodel = FSDP(model)\ndist.all_reduce(loss_sum)\n'
    )
    AFTER = (
        "import torch.distributed as dist\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n"
        'dist.init_process_group("nccl")\nmodel = FSDP(model)\n'
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func) if self.shards else None
        line = self.ctx.statements[-1] if self.ctx.statements else None
        if name in IDENTITIES and not (
            isinstance(line, cst.SimpleStatementLine) and self.plan(line) and line.body[0].value is original
        ):
            self.flag(
                original,
                f"`{snippet(original)}` in the one SPMD process: it has no process groups to run it on (on the "
                f"default group, as a statement of its own, {IDENTITIES[name]}, and it goes); compute on the "
                f"whole tensors instead ({SPMD_GUIDE})",
            )
        return updated

    def plan(self, statement: cst.SimpleStatementLine) -> str | None:
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or any(a.star for a in call.args):
            return None
        name = self.qualname(call.func)
        if name not in IDENTITIES or any(
            a.keyword is not None and a.keyword.value not in KEPT_KEYWORDS for a in call.args
        ):
            return None  # a group of its own, async_op: flagged (leave_Call)
        return name

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, name: str):
        self.ctx.forget_fixes_inside(original)  # XLA607's xm form of a barrier goes with it
        call = original.body[0].value
        tensor = call_arg(call, 0, "tensor")
        what = f"`{snippet(call)}`" if tensor is None else f"`{snippet(call)}`: `{code_of(tensor.value)}`"
        return self.replace(
            original,
            updated,
            cst.RemovalSentinel.REMOVE,
            f"{what} in the one SPMD process, process 0 of 1: {IDENTITIES[name]}; removed ({SPMD_GUIDE})",
            drop_if_unused=imports_behind(self, original),
        )
