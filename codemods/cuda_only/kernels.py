"""XLA805-XLA806: C++/CUDA extensions and Triton kernels are flagged: their kernels need a
GPU; XLA devices run Pallas kernels (the migration guide's "Unsupported Operations")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.cuda_only.common import PALLAS_DOC, TPU_COMPILE_BACKEND, TPU_PALLAS_DOC, CudaOnlyApi
from migrate_xla.rule.api import find, string_value, words

CUDA_SOURCE = re.compile(r"\.cuh?\b")
CPP_EXTENSION = "torch.utils.cpp_extension."
KERNEL_HINT = (
    "its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel "
    f"(`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see {PALLAS_DOC}"
)
# Under TorchTPU: its Pallas bridge is `torch.tpu.pallas` (jax_op), and torch.compile's "tpu" backend fuses ops
TPU_KERNEL_HINT = (
    "its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (TorchTPU's "
    "`torch.tpu.pallas`), or express them in PyTorch ops, which `torch.compile(..., "
    f'backend="{TPU_COMPILE_BACKEND}")` fuses; see {TPU_PALLAS_DOC}'
)


class CudaExtension(CudaOnlyApi):
    """C++/CUDA extensions built from ``.cu`` sources are flagged: their kernels need a GPU.

    Guide, "Unsupported Operations": XLA lowers PyTorch ops, not CUDA kernels. Flagged:
    ``CUDAExtension`` (``setup.py``), and ``torch.utils.cpp_extension.load`` /
    ``load_inline`` when given ``.cu`` / ``.cuh`` sources, ``cuda_sources=`` or
    ``with_cuda=True``; the module they return is flagged where used. A C++-only
    extension is left alone: it runs on the CPU (slowly, like any CPU fallback).
    """

    CODE = "XLA805"
    NAME = "cuda-extension"
    SUMMARY = "CUDAExtension and cpp_extension.load / load_inline of .cu sources are flagged"
    TRIGGERS = (r"cpp_extension",)
    TRACK = True
    APIS = {
        f"{CPP_EXTENSION}CUDAExtension": f"builds a CUDA extension: {KERNEL_HINT}",
        f"{CPP_EXTENSION}load": f"builds a CUDA extension from `.cu` sources: {KERNEL_HINT}",
        f"{CPP_EXTENSION}load_inline": f"builds a CUDA extension from CUDA sources: {KERNEL_HINT}",
    }
    RUNTIME_APIS = {"torch-tpu": {api: message.replace(KERNEL_HINT, TPU_KERNEL_HINT) for api, message in APIS.items()}}
    BEFORE = (
        "from torch.utils.cpp_extension import load\n"
        'ext = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])\n'
        "y = ext.forward(x)\n"
    )
    AFTER = (
        "from torch.utils.cpp_extension import load\n"
        f"# TODO(xla-migrate): XLA805 `load` {APIS[f'{CPP_EXTENSION}load']}\n"
        'ext = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])\n'
        f"# TODO(xla-migrate): XLA805 `ext` holds a `{CPP_EXTENSION}load`, which "
        f"{APIS[f'{CPP_EXTENSION}load']}\n"
        "y = ext.forward(x)\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.cpu_only: set[int] = set()  # load(...) references whose sources are C++ only

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname(node.func) in (f"{CPP_EXTENSION}load", f"{CPP_EXTENSION}load_inline"):
            if not any(self._builds_cuda(arg) for arg in node.args):
                self.cpu_only.add(id(node.func))

    def _builds_cuda(self, arg: cst.Arg) -> bool:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "cuda_sources":
            return True
        if keyword == "with_cuda":
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
        return find(arg.value, lambda n: bool(CUDA_SOURCE.search(string_value(n) or ""))) is not None

    def accept(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.cpu_only


class TritonKernel(CudaOnlyApi):
    """Triton kernels are flagged: Triton generates GPU code, XLA devices run Pallas kernels.

    Guide, "Unsupported Operations"; PyTorch/XLA's "Custom Kernels via Pallas"
    (https://docs.pytorch.org/xla/master/features/pallas.html) is the TPU counterpart
    of a Triton kernel. A ``@triton.jit`` (or ``@triton.autotune``)
    function gets one TODO (its body is not flagged line by line), and so does each
    statement that launches it (``kernel[grid](...)``) or uses ``triton`` otherwise.
    """

    CODE = "XLA806"
    NAME = "triton-kernel"
    SUMMARY = "Triton kernels and their launches are flagged (write a Pallas kernel instead)"
    TRIGGERS = (words("triton"),)  # names under triton. (the names it tracks were first one of them)
    TRACK = True
    SKIP_INSIDE = True
    APIS = {
        "triton.": "is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel "
        "(`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; "
        f"see {PALLAS_DOC}",
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            "triton.": "is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel "
            "(TorchTPU's `torch.tpu.pallas`), or express it in PyTorch ops, which `torch.compile(..., "
            f'backend="{TPU_COMPILE_BACKEND}")` fuses; see {TPU_PALLAS_DOC}',
        }
    }
    BEFORE = "import triton\n@triton.jit\ndef add_kernel(x_ptr, n):\n    pass\nadd_kernel[(1,)](x, 4)\n"
    AFTER = (
        "import triton\n"
        f"# TODO(xla-migrate): XLA806 `add_kernel` {APIS['triton.']}\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, n):\n"
        "    pass\n"
        f"# TODO(xla-migrate): XLA806 `add_kernel` holds a `triton.jit`, which {APIS['triton.']}\n"
        "add_kernel[(1,)](x, 4)\n"
    )

    def message(self, node: cst.CSTNode, api: str) -> str:
        statement = self.ctx.statements[-1]
        if isinstance(statement, cst.FunctionDef):  # @triton.jit: the kernel is what the message is about
            return f"`{statement.name.value}` {self.hint(api)}"
        return super().message(node, api)
