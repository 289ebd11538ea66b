"""XLA807-XLA809: NVIDIA libraries are flagged: apex, CuPy, NVML queries (the migration
guide's "Unsupported Operations", "Debugging and Profiling")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.cuda_only.common import GUIDE, TPU_AMP_GUIDE, TPU_GUIDE, CudaOnlyApi, is_message_call
from codemods.shared.apex_amp import APEX_AMP_HANDLED
from migrate_xla.rule.api import RUNTIME, string_value, words

APEX_AMP = (
    "is apex mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)` around the forward "
    "pass; bfloat16 needs no loss scaling, so `amp.initialize` and `amp.scale_loss` go; see "
    "https://docs.pytorch.org/xla/master/perf/amp.html"
)
TPU_APEX_AMP = (
    "is apex mixed precision: use `torch.autocast('tpu', dtype=torch.bfloat16)` around the forward "
    "pass; bfloat16 needs no loss scaling, so `amp.initialize` and `amp.scale_loss` go; see "
    f"{TPU_AMP_GUIDE}"
)


class Apex(CudaOnlyApi):
    """NVIDIA apex is flagged: its fused kernels are CUDA-only; PyTorch has the counterparts.

    Guide, "Unsupported Operations" (and "Automatic Mixed Precision" for ``apex.amp``).
    Each message names the PyTorch replacement: ``torch.optim.AdamW`` / ``Adam`` / ``SGD``
    for the fused optimizers, ``torch.nn.LayerNorm`` / ``RMSNorm`` for the fused norms,
    ``torch.autocast('xla', dtype=torch.bfloat16)`` for ``apex.amp``, PyTorch's DDP for
    ``apex.parallel``. Not rewritten: the options differ (``adam_w_mode``,
    ``set_grad_none``, opt levels), so a person picks the equivalent. What XLA408 answers for
    of ``apex.amp`` (``scale_loss``, ``master_params``, ``state_dict``, ``load_state_dict``,
    ``initialize``: converted, or flagged by XLA408 with what to do) is not flagged again here.
    """

    CODE = "XLA807"
    NAME = "apex"
    SUMMARY = "NVIDIA apex (fused optimizers and norms, amp, parallel) is flagged with its PyTorch counterpart"
    TRIGGERS = (words("apex"),)
    APIS = {
        "apex.": "is NVIDIA apex, whose fused kernels are CUDA-only: use the PyTorch module or function "
        f"it fuses; see {GUIDE}",
        "apex.amp": APEX_AMP,
        "apex.optimizers.": "is an apex fused CUDA optimizer: use its `torch.optim` counterpart; XLA fuses "
        f"the update itself; see {GUIDE}",
        "apex.optimizers.FusedAdam": "is apex's fused CUDA Adam: use `torch.optim.AdamW` (FusedAdam's "
        f"default `adam_w_mode=True`) or `torch.optim.Adam`; see {GUIDE}",
        "apex.optimizers.FusedSGD": f"is apex's fused CUDA SGD: use `torch.optim.SGD`; see {GUIDE}",
        "apex.optimizers.FusedAdagrad": f"is apex's fused CUDA Adagrad: use `torch.optim.Adagrad`; see {GUIDE}",
        "apex.optimizers.FusedLAMB": "is apex's fused CUDA LAMB: PyTorch has no LAMB; use "
        f"`torch.optim.AdamW` or a LAMB written in PyTorch ops; see {GUIDE}",
        "apex.normalization.FusedLayerNorm": f"is apex's fused CUDA LayerNorm: use `torch.nn.LayerNorm`; see {GUIDE}",
        "apex.normalization.FusedRMSNorm": f"is apex's fused CUDA RMSNorm: use `torch.nn.RMSNorm`; see {GUIDE}",
        "apex.parallel.": "is apex's CUDA data parallelism: use `torch.nn.parallel.DistributedDataParallel` "
        "with the `xla` process group backend, or `xm.optimizer_step` in `torch_xla.launch`; see "
        "https://docs.pytorch.org/xla/master/perf/ddp.html",
        "apex.parallel.LARC": "is apex's layer-wise adaptive rate wrapper of an optimizer (LARS), not data "
        "parallelism: write its step in PyTorch ops (each parameter's update scaled by "
        "`trust * norm(p) / (norm(grad) + weight_decay * norm(p))`, clipped as LARC clips), which XLA compiles "
        f"into the step; see {GUIDE}",
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            "apex.": "is NVIDIA apex, whose fused kernels are CUDA-only: use the PyTorch module or function "
            f"it fuses; see {TPU_GUIDE}",
            "apex.amp": TPU_APEX_AMP,
            "apex.optimizers.": f"is an apex fused CUDA optimizer: use its `torch.optim` counterpart; see {TPU_GUIDE}",
            "apex.optimizers.FusedAdam": "is apex's fused CUDA Adam: use `torch.optim.AdamW` (FusedAdam's "
            f"default `adam_w_mode=True`) or `torch.optim.Adam`; see {TPU_GUIDE}",
            "apex.optimizers.FusedSGD": f"is apex's fused CUDA SGD: use `torch.optim.SGD`; see {TPU_GUIDE}",
            "apex.optimizers.FusedAdagrad": f"is apex's fused CUDA Adagrad: use `torch.optim.Adagrad`; see {TPU_GUIDE}",
            "apex.optimizers.FusedLAMB": "is apex's fused CUDA LAMB: PyTorch has no LAMB; use "
            f"`torch.optim.AdamW` or a LAMB written in PyTorch ops; see {TPU_GUIDE}",
            "apex.normalization.FusedLayerNorm": "is apex's fused CUDA LayerNorm: use `torch.nn.LayerNorm`; "
            f"see {TPU_GUIDE}",
            "apex.normalization.FusedRMSNorm": f"is apex's fused CUDA RMSNorm: use `torch.nn.RMSNorm`; see {TPU_GUIDE}",
            "apex.parallel.": "is apex's CUDA data parallelism: use `torch.nn.parallel.DistributedDataParallel` "
            f"with the `{RUNTIME['torch-tpu'].backend}` process group backend; see {TPU_GUIDE}",
            "apex.parallel.LARC": "is apex's layer-wise adaptive rate wrapper of an optimizer (LARS), not data "
            "parallelism: write its step in PyTorch ops (each parameter's update scaled by "
            "`trust * norm(p) / (norm(grad) + weight_decay * norm(p))`, clipped as LARC clips); "
            f"see {TPU_GUIDE}",
        }
    }
    BEFORE = "from apex.optimizers import FusedAdam\noptimizer = FusedAdam(model.parameters(), lr=1e-3)\n"
    AFTER = (
        "from apex.optimizers import FusedAdam\n"
        f"# TODO(xla-migrate): XLA807 `FusedAdam` {APIS['apex.optimizers.FusedAdam']}\n"
        "optimizer = FusedAdam(model.parameters(), lr=1e-3)\n"
    )

    def accept(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.ctx.shared.get(APEX_AMP_HANDLED, ())


class Cupy(CudaOnlyApi):
    """CuPy is flagged: its arrays live on an NVIDIA GPU.

    Guide, "Unsupported Operations": on an XLA device, array work is PyTorch ops on the
    device (``torch.from_dlpack`` does not reach an XLA tensor either), or NumPy on the host.
    """

    CODE = "XLA808"
    NAME = "cupy"
    SUMMARY = "CuPy arrays and kernels are flagged (use torch ops on the XLA device, or NumPy)"
    TRIGGERS = (words("cupy"),)
    APIS = {
        "cupy.": "is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the XLA device, "
        f"or NumPy on the host; see {GUIDE}",
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            "cupy.": "is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the TPU device, "
            f"or NumPy on the host; see {TPU_GUIDE}",
        }
    }
    BEFORE = "import cupy as cp\nweights = cp.asarray(host_weights)\n"
    AFTER = (
        "import cupy as cp\n"
        f"# TODO(xla-migrate): XLA808 `cp.asarray` {APIS['cupy.']}\n"
        "weights = cp.asarray(host_weights)\n"
    )


class NvmlQuery(CudaOnlyApi):
    """NVML queries (``pynvml``, ``py3nvml``, ``nvidia_smi``, ``GPUtil``) are flagged: no NVIDIA driver on a TPU VM.

    Guide, "Debugging and Profiling": PyTorch/XLA has its own tools. Memory use is
    ``xm.get_memory_info(device)`` (TPU; not on CPU PJRT), and compile and execution
    counts are in ``torch_xla.debug.metrics``. The ``nvidia-smi`` command, run with
    ``subprocess``, ``os.system`` or a notebook's ``!nvidia-smi``, is flagged too.
    """

    CODE = "XLA809"
    NAME = "nvml-query"
    SUMMARY = "pynvml / nvidia_smi / GPUtil GPU queries and nvidia-smi commands are flagged"
    TRIGGERS = (r"nvml|nvidia_smi|nvidia-smi|GPUtil",)
    APIS = {
        api: "queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with "
        "`xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; "
        "see https://docs.pytorch.org/xla/master/learn/troubleshoot.html"
        for api in ("pynvml.", "py3nvml.", "nvidia_smi.", "GPUtil.")
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            api: "queries NVIDIA GPUs through NVML, which a TPU VM does not have: read the device with "
            "`torch.tpu.get_device_name()` / `torch.tpu.get_device_properties()` and count devices with "
            f"`torch.tpu.device_count()` (`torch.tpu` has no memory statistics); see {TPU_GUIDE}"
            for api in APIS
        }
    }
    BEFORE = "import pynvml\npynvml.nvmlInit()\n"
    AFTER = f"import pynvml\n# TODO(xla-migrate): XLA809 `pynvml.nvmlInit` {APIS['pynvml.']}\npynvml.nvmlInit()\n"

    def visit_Call(self, node: cst.Call) -> None:
        """``os.system("nvidia-smi")``, ``subprocess.run(["nvidia-smi", ...])``; not ``print("nvidia-smi ...")``."""
        if not self.ctx.statements or id(self.ctx.statements[-1]) in self.flagged or is_message_call(node):
            return
        for arg in node.args:
            command = arg.value
            if isinstance(command, (cst.List, cst.Tuple)) and command.elements:
                command = command.elements[0].value  # the program of an argument list
            if NVIDIA_SMI.match(string_value(command) or ""):
                self.flagged[id(self.ctx.statements[-1])] = "nvidia-smi"
                self.flag(node, f"`nvidia-smi` {self.hint('pynvml.')}")
                return


NVIDIA_SMI = re.compile(r"\s*nvidia-smi(?:\s|$)")
