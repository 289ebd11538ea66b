"""Custom CUDA kernels built with torch.utils.cpp_extension, in a script and in setup.py style. [XLA805]"""

import os

import torch
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, load, load_inline

here = os.path.dirname(__file__)
# TODO(xla-migrate): XLA805 `load` builds a CUDA extension from `.cu` sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see https://docs.pytorch.org/xla/master/features/pallas.html
fused = load(name="fused", sources=[os.path.join(here, "fused.cpp"), os.path.join(here, "fused_kernel.cu")])
# TODO(xla-migrate): XLA805 `load_inline` builds a CUDA extension from CUDA sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see https://docs.pytorch.org/xla/master/features/pallas.html
inline = load_inline(name="inline_ext", cpp_sources="", cuda_sources=open("kernel.cuh").read(), functions=["run"])
cpu_ext = cpp_extension.load(name="cpu_ext", sources=["cpu_only.cpp"])  # C++ only: runs on the host


def forward(x):
    # TODO(xla-migrate): XLA805 `fused` holds a `torch.utils.cpp_extension.load`, which builds a CUDA extension from `.cu` sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see https://docs.pytorch.org/xla/master/features/pallas.html
    y = fused.forward(x)
    # TODO(xla-migrate): XLA805 `inline` holds a `torch.utils.cpp_extension.load_inline`, which builds a CUDA extension from CUDA sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see https://docs.pytorch.org/xla/master/features/pallas.html
    return inline.run(y) + cpu_ext.forward(y)


# TODO(xla-migrate): XLA805 `CUDAExtension` builds a CUDA extension: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see https://docs.pytorch.org/xla/master/features/pallas.html
ext_modules = [CUDAExtension("fused_ext", ["fused.cpp", "fused_kernel.cu"])]
cmdclass = {"build_ext": BuildExtension}
