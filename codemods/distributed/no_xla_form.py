"""XLA608-XLA609: what has no direct XLA form: FSDP, RPC, pipeline and tensor parallelism
are flagged (XLA608), ``torchrun`` launch lines in comments and docstrings too (XLA609)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.distributed.common import FSDP_GUIDE, SPMD_GUIDE
from migrate_xla.rule import Rule, code_of, words

# qualified-name prefix -> where to go instead
MODEL_PARALLEL = {
    "torch.distributed.fsdp": f"use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see {FSDP_GUIDE}",
    "torch.distributed._composable.fsdp": f"use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`), see {FSDP_GUIDE}",
    "torch.distributed.rpc": f"has no XLA counterpart: restructure as data parallelism or SPMD sharding, see {SPMD_GUIDE}",
    "torch.distributed.pipelining": f"express the split as SPMD sharding over a device mesh, see {SPMD_GUIDE}",
    "torch.distributed.pipeline": f"express the split as SPMD sharding over a device mesh, see {SPMD_GUIDE}",
    "torch.distributed.tensor": f"shard with SPMD (`xs.mark_sharding` over an `xs.Mesh`), see {SPMD_GUIDE}",
    "torch.distributed._tensor": f"shard with SPMD (`xs.mark_sharding` over an `xs.Mesh`), see {SPMD_GUIDE}",
    "torch.distributed.device_mesh": f"build an `xs.Mesh` for SPMD instead, see {SPMD_GUIDE}",
}


class ModelParallelism(Rule):
    """FSDP, RPC, pipeline and tensor parallelism are flagged, never half-converted.

    Their PyTorch forms are built on CUDA devices and NCCL (FSDP flattens parameters on
    the GPU, RPC moves tensors between GPU workers, DTensor places shards on a CUDA
    device mesh). PyTorch/XLA has its own FSDP (``XlaFullyShardedDataParallel``, and
    FSDP via SPMD) and expresses tensor and pipeline splits as SPMD sharding annotations.
    Moving a model between them changes how it is wrapped, checkpointed and launched,
    so each use is flagged with the guide to follow.
    """

    CODE = "XLA608"
    NAME = "model-parallelism"
    SUMMARY = "FSDP, RPC, pipeline and tensor parallelism are flagged with PyTorch/XLA's FSDP and SPMD guides"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (
        # literals, found with `in`, and a word: no regex to run
        r"fsdp|FullyShard|fully_shard|pipelin|distributed\.tensor|distributed\._tensor|device_mesh|DeviceMesh|"
        r"parallelize_module",
        words("rpc"),
    )
    BEFORE = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nmodel = FSDP(model)\n"
    AFTER = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n" + (
        f"# TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP "
        f"(`torch_xla.distributed.fsdp`, or FSDP via SPMD), see {FSDP_GUIDE}\nmodel = FSDP(model)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func) or ""
        prefix = next((p for p in MODEL_PARALLEL if name == p or name.startswith(p + ".")), None)
        if prefix is not None and not (self.ctx.statements and id(self.ctx.statements[-1]) in self.ctx.todos):
            self.flag(node, f"`{code_of(node.func)}` is `{prefix}`: {MODEL_PARALLEL[prefix]}")


LAUNCH_LINE = re.compile(r"\btorchrun\s+(-|\S+\.py\b)|-m\s+torch\.distributed\.(launch|run)\b")
TPU_LAUNCH = (
    "on a TPU VM, a script that calls `torch_xla.launch` starts with plain `PJRT_DEVICE=TPU python script.py` "
    "(one process per chip); a torchrun-style one keeps `torchrun --nproc_per_node=<chips per host>` with "
    "`PJRT_DEVICE=TPU` (the xla:// rendezvous reads torchrun's variables); on a pod run the command on every "
    "host: `gcloud compute tpus tpu-vm ssh NAME --worker=all --command=...`"
)


class TorchrunLaunchLine(Rule):
    """``torchrun`` / ``python -m torch.distributed.launch`` lines in comments and docstrings.

    The launch instructions a script carries are for GPU machines. PyTorch/XLA starts
    one process per device with ``torch_xla.launch`` (plain ``python``), and its
    ``xla://`` rendezvous also accepts torchrun's environment (see
    ``torch_xla/_internal/rendezvous.py``). The text is the author's, so this only
    reports where the instructions need updating.
    """

    CODE = "XLA609"
    NAME = "torchrun-launch-line"
    SUMMARY = "torchrun / torch.distributed.launch instructions in comments and docstrings: how to launch on a TPU VM"
    FIX = None
    SEVERITY = "info"
    TRIGGERS = (r"torchrun|torch\.distributed\.(launch|run)",)
    BEFORE = "# torchrun --nproc_per_node=8 train.py\n"
    AFTER = "# torchrun --nproc_per_node=8 train.py\n"

    def visit_Comment(self, node: cst.Comment) -> None:
        if LAUNCH_LINE.search(node.value):
            self.note(node, f"launch instructions for GPUs: {TPU_LAUNCH}")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if LAUNCH_LINE.search(node.value):
            self.note(node, f"launch instructions for GPUs: {TPU_LAUNCH}")
