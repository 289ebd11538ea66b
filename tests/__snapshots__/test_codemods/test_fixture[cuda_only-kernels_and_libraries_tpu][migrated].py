# fixture: runtime=torch-tpu
"""Under TorchTPU: CUDA extensions, Triton kernels, apex, CuPy and NVML are flagged with
TorchTPU's counterparts (torch.tpu.pallas, torch.autocast('tpu', ...), torch.tpu's device queries). [XLA408, XLA805, XLA806, XLA807, XLA808, XLA809]"""

import subprocess

import cupy as cp
import pynvml
import triton
from apex import amp
from apex.optimizers import FusedAdam
from apex.parallel import DistributedDataParallel
from torch.utils.cpp_extension import load

# TODO(xla-migrate): XLA805 `load` builds a CUDA extension from `.cu` sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (TorchTPU's `torch.tpu.pallas`), or express them in PyTorch ops, which `torch.compile(..., backend="tpu")` fuses; see https://docs.jax.dev/en/latest/pallas/index.html
ext = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])


# TODO(xla-migrate): XLA806 `add_kernel` is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (TorchTPU's `torch.tpu.pallas`), or express it in PyTorch ops, which `torch.compile(..., backend="tpu")` fuses; see https://docs.jax.dev/en/latest/pallas/index.html
@triton.jit
def add_kernel(x_ptr, n):
    pass


def train(model, x):
    # TODO(xla-migrate): XLA805 `ext` holds a `torch.utils.cpp_extension.load`, which builds a CUDA extension from `.cu` sources: its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel (TorchTPU's `torch.tpu.pallas`), or express them in PyTorch ops, which `torch.compile(..., backend="tpu")` fuses; see https://docs.jax.dev/en/latest/pallas/index.html
    y = ext.forward(x)
    # TODO(xla-migrate): XLA806 `add_kernel` holds a `triton.jit`, which is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (TorchTPU's `torch.tpu.pallas`), or express it in PyTorch ops, which `torch.compile(..., backend="tpu")` fuses; see https://docs.jax.dev/en/latest/pallas/index.html
    add_kernel[(1,)](y, 4)
    # TODO(xla-migrate): XLA807 `FusedAdam` is apex's fused CUDA Adam: use `torch.optim.AdamW` (FusedAdam's default `adam_w_mode=True`) or `torch.optim.Adam`; see https://pypi.org/project/torch-tpu/
    optimizer = FusedAdam(model.parameters(), lr=1e-3)
    # TODO(xla-migrate): XLA408 `amp.initialize(model, optimizer, opt_level="O1")` is apex mixed precision and xla-migrate finds no forward pass to put in autocast (the statements that compute the loss `amp.scale_loss` scales, from a call of the model it was given, in the block of that `with`): remove it (without apex it returns its models and optimizers as they are) and put the forward pass in `with torch.autocast("tpu", dtype=torch.bfloat16):`; TPU autocast computes in bfloat16, which needs no loss scaling; see https://docs.pytorch.org/docs/stable/amp.html
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    # TODO(xla-migrate): XLA807 `DistributedDataParallel` is apex's CUDA data parallelism: use `torch.nn.parallel.DistributedDataParallel` with the `tpu` process group backend; see https://pypi.org/project/torch-tpu/
    model = DistributedDataParallel(model)
    # TODO(xla-migrate): XLA808 `cp.asarray` is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the TPU device, or NumPy on the host; see https://pypi.org/project/torch-tpu/
    weights = cp.asarray(y)
    # TODO(xla-migrate): XLA809 `pynvml.nvmlInit` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read the device with `torch.tpu.get_device_name()` / `torch.tpu.get_device_properties()` and count devices with `torch.tpu.device_count()` (`torch.tpu` has no memory statistics); see https://pypi.org/project/torch-tpu/
    pynvml.nvmlInit()
    # TODO(xla-migrate): XLA809 `nvidia-smi` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read the device with `torch.tpu.get_device_name()` / `torch.tpu.get_device_properties()` and count devices with `torch.tpu.device_count()` (`torch.tpu` has no memory statistics); see https://pypi.org/project/torch-tpu/
    subprocess.run(["nvidia-smi"])
    return weights
