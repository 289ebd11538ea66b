"""XLA626: ``torch.distributed.checkpoint`` of sharded state saves and loads with torch_xla's SPMD
planners."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, ShardingRule
from migrate_xla.rule.api import Import, append_keyword, call_arg, code_of, parse_expr

DCP = "torch.distributed.checkpoint"
XC = Import("torch_xla.experimental.distributed_checkpoint", asname="xc")
# what saves or loads, and the planner torch_xla gives it
PLANNERS = {
    **dict.fromkeys((f"{DCP}.save", f"{DCP}.state_dict_saver.save", f"{DCP}.save_state_dict"), "xc.SPMDSavePlanner()"),
    **dict.fromkeys((f"{DCP}.load", f"{DCP}.state_dict_loader.load", f"{DCP}.load_state_dict"), "xc.SPMDLoadPlanner()"),
}
CHECKPOINT_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_distributed_checkpoint.html"


class DistributedCheckpoint(ShardingRule):
    """``dcp.save(state_dict, ...)`` and ``dcp.load(state_dict, ...)`` without a planner get
    torch_xla's SPMD planners (``planner=xc.SPMDSavePlanner()`` / ``xc.SPMDLoadPlanner()``).

    torch.distributed.checkpoint saves each rank's shards of a sharded state (FSDP's, DTensor's)
    where they live and loads them back into the layout the state has. SPMD distributed
    checkpointing guide: on PyTorch/XLA the same API takes torch_xla's planners, which save and
    load each device's shards of an SPMD program's tensors, so that on a pod each host writes
    and reads only the shards its devices hold. Measured on four CPU devices
    (tests/test_sharding.py): a model whose parameters are sharded over an ``fsdp`` axis saves
    and loads back equal with the planners (one process, no process group; torch's default
    planner also round-trips there, gathering every tensor whole, which a pod's hosts cannot).
    A call that names its own planner is left as it is.
    """

    CODE = "XLA626"
    NAME = "distributed-checkpoint"
    SUMMARY = "torch.distributed.checkpoint's save / load of sharded state get torch_xla's SPMD planners"
    FIX = "safe"
    BEFORE = (
        "import torch.distributed.checkpoint as dcp\nfrom torch.distributed import init_process_group\n"
        "from torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\ndcp.save({"model": model.state_dict()}, checkpoint_id=path)\n'
    )
    AFTER = (
        "import torch.distributed.checkpoint as dcp\nfrom torch.distributed import init_process_group\n"
        "from torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\n'
        'dcp.save({"model": model.state_dict()}, checkpoint_id=path, planner=xc.SPMDSavePlanner())\n'
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        planner = PLANNERS.get(self.qualname(original.func) or "")
        if not self.shards or planner is None or any(a.star for a in original.args):
            return updated
        if call_arg(original, None, "planner") is not None or len([a for a in original.args if not a.keyword]) > 1:
            return updated  # a planner of its own (by keyword, or positional in the deprecated forms)
        return self.replace(
            original,
            updated,
            append_keyword(updated, "planner", parse_expr(planner)),
            f"`{code_of(original.func)}` of sharded state: `planner={planner}`, torch_xla's, which saves and loads "
            f"each device's shards where they live ({CHECKPOINT_GUIDE}, {SPMD_GUIDE})",
            imports=[XC],
        )
