"""XLA608-XLA609: what has no direct XLA form: FSDP, RPC, pipeline and tensor parallelism
are flagged (XLA608), ``torchrun`` launch lines in comments and docstrings too (XLA609);
under TorchTPU, with what to check and set for its ``tpu`` device."""

from __future__ import annotations

import re

import libcst as cst

from codemods.distributed.common import FSDP_GUIDE, SPMD_GUIDE
from codemods.shared.sharded_models import PLACEMENT_MODULES
from migrate_xla.rule.api import Rule, code_of, words

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
# The same prefixes under TorchTPU, which runs torch.distributed itself over its "tpu" process group
TPU_MESH = (
    'a mesh of the `"tpu"` device type (`init_device_mesh("tpu", ...)`; '
    "`torch.tpu.topology_aware_mesh` lays the ranks out along the chips' links)"
)
TPU_SHARDING = (
    'under TorchTPU it shards over the `"tpu"` process group on the `tpu` device: place the module on '
    f'`torch.device("tpu")` and build {TPU_MESH}; TorchTPU is beta, so check the sharded run on a TPU'
)
TPU_MODEL_PARALLEL = {
    "torch.distributed.fsdp": TPU_SHARDING,
    "torch.distributed._composable.fsdp": TPU_SHARDING,
    "torch.distributed.rpc": (
        "moves tensors between workers with CUDA device maps, and TorchTPU gives its device no RPC "
        'transport: restructure as data parallelism (DDP over the `"tpu"` process group) or DTensor sharding'
    ),
    "torch.distributed.pipelining": (
        'under TorchTPU its stages pass activations with the `"tpu"` group\'s send and recv: place each stage '
        'on `torch.device("tpu")` (one device a process); TorchTPU is beta, so check the pipeline on a TPU'
    ),
    "torch.distributed.pipeline": (
        "the old Pipe API is gone from the torch releases TorchTPU runs with (2.11 and later): "
        'use `torch.distributed.pipelining`, its stages on `torch.device("tpu")`'
    ),
    "torch.distributed.tensor": f"DTensor runs on TorchTPU's device: build {TPU_MESH}",
    "torch.distributed._tensor": f"DTensor runs on TorchTPU's device: build {TPU_MESH}",
    "torch.distributed.device_mesh": f"build {TPU_MESH}",
}


# DTensor's placements (``Shard(0)``) and FSDP2's policies (``MixedPrecisionPolicy(...)``) are data,
# which runs anywhere: what they are handed to (``distribute_tensor``, a parallel style,
# ``fully_shard``) is flagged where it has no XLA form, and the SPMD program reads them (XLA622, XLA628)
DATA = frozenset(
    [
        *(f"{module}.{name}" for module in PLACEMENT_MODULES for name in ("Shard", "Replicate", "Partial")),
        *(
            f"{module}.{name}"
            for module in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp")
            for name in ("MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy")
        ),
    ]
)


class ModelParallelism(Rule):
    """FSDP, RPC, pipeline and tensor parallelism are flagged, never half-converted.

    Their PyTorch forms are built on CUDA devices and NCCL (FSDP flattens parameters on
    the GPU, RPC moves tensors between GPU workers, DTensor places shards on a CUDA
    device mesh). PyTorch/XLA has its own FSDP (``XlaFullyShardedDataParallel``, and
    FSDP via SPMD) and expresses tensor and pipeline splits as SPMD sharding annotations.
    Moving a model between them changes how it is wrapped, checkpointed and launched,
    so each use is flagged with the guide to follow.

    Both runtimes. TorchTPU runs ``torch.distributed`` itself over its ``tpu`` process group:
    DTensor and DeviceMesh take the ``tpu`` device type (it installs its own
    ``DTensor.from_local`` and ``torch.tpu.topology_aware_mesh``), so FSDP, tensor and pipeline
    parallelism keep their PyTorch form there; each use is still flagged, with what must name
    TorchTPU's device (the module's placement, the mesh's device type) and a check on a TPU,
    since nothing here runs them. RPC has no TorchTPU transport and is flagged as on XLA.
    """

    CODE = "XLA608"
    NAME = "model-parallelism"
    SUMMARY = "FSDP, RPC, pipeline and tensor parallelism are flagged with PyTorch/XLA's FSDP and SPMD guides (TorchTPU's device)"
    FIX = None
    SEVERITY = "error"
    # A call resolves to a name under one of MODEL_PARALLEL's modules only through an import or
    # attribute chain that spells the module's last part as a word (``names_trigger``): ``fsdp``
    # in ``from torch.distributed.fsdp import FullyShardedDataParallel as FSDP``, whose uses a
    # slice keeps as the import's names, but not in ``self._fsdp_state``, which the units of
    # torch's own FSDP are full of. ``tensor`` is every file's word: that module is spelled whole.
    TRIGGERS = (
        words("fsdp", "rpc", "pipelining", "pipeline", "device_mesh"),
        r"distributed\.tensor|distributed\._tensor",
    )
    BEFORE = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nmodel = FSDP(model)\n"
    AFTER = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n" + (
        f"# TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP "
        f"(`torch_xla.distributed.fsdp`, or FSDP via SPMD), see {FSDP_GUIDE}\nmodel = FSDP(model)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func) or ""
        prefix = next((p for p in MODEL_PARALLEL if name == p or name.startswith(p + ".")), None)
        if (
            prefix is not None
            and name not in DATA
            and not (self.ctx.statements and id(self.ctx.statements[-1]) in self.ctx.todos)
        ):
            advice = MODEL_PARALLEL if self.ctx.runtime == "torch-xla" else TPU_MODEL_PARALLEL
            self.flag(node, f"`{code_of(node.func)}` is `{prefix}`: {advice[prefix]}")


LAUNCH_LINE = re.compile(r"\btorchrun\s+(-|\S+\.py\b)|-m\s+torch\.distributed\.(launch|run)\b")
TPU_LAUNCH = (
    "on a TPU VM, a script that calls `torch_xla.launch` starts with plain `PJRT_DEVICE=TPU python script.py` "
    "(one process per chip); a torchrun-style one keeps `torchrun --nproc_per_node=<chips per host>` with "
    "`PJRT_DEVICE=TPU` (the xla:// rendezvous reads torchrun's variables); on a pod run the command on every "
    "host: `gcloud compute tpus tpu-vm ssh NAME --worker=all --command=...`"
)
TORCH_TPU_LAUNCH = (
    "under TorchTPU torchrun stays (`--nproc_per_node=<chips per host>`), but every rank must see the same "
    "TPU launch environment (`TORCH_TPU_SLICEBUILDER_ADDRESSES`, `TORCH_TPU_TOPOLOGY`), which nothing in torch "
    "sets: set it in the shell that runs torchrun, or start the workers from Python after "
    "`torch.tpu.distributed.set_tpu_launch_env(nproc_per_node=...)`; on a pod run the command on every host: "
    "`gcloud compute tpus tpu-vm ssh NAME --worker=all --command=...`"
)


class TorchrunLaunchLine(Rule):
    """``torchrun`` / ``python -m torch.distributed.launch`` lines in comments and docstrings.

    The launch instructions a script carries are for GPU machines. PyTorch/XLA starts
    one process per device with ``torch_xla.launch`` (plain ``python``), and its
    ``xla://`` rendezvous also accepts torchrun's environment (see
    ``torch_xla/_internal/rendezvous.py``). The text is the author's, so this only
    reports where the instructions need updating.

    Both runtimes. Under TorchTPU the script keeps torchrun, but its workers need the TPU
    launch environment that TorchTPU's ``set_tpu_launch_env`` decides in a parent process (the
    chips' addresses and topology, the same for every rank): the note says so.
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
            self.note(node, f"launch instructions for GPUs: {self._how()}")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if LAUNCH_LINE.search(node.value):
            self.note(node, f"launch instructions for GPUs: {self._how()}")

    def _how(self) -> str:
        return TPU_LAUNCH if self.ctx.runtime == "torch-xla" else TORCH_TPU_LAUNCH
