"""A Triton kernel, an autotuned one, and the Python wrappers that launch them. [XLA806]"""

import torch
import triton
import triton.language as tl


# TODO(xla-migrate): XLA806 `add_kernel` is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; see https://docs.pytorch.org/xla/master/features/pallas.html
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


# TODO(xla-migrate): XLA806 `scale_kernel` is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; see https://docs.pytorch.org/xla/master/features/pallas.html
@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2, mask=offsets < n)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    # TODO(xla-migrate): XLA806 `triton.cdiv` is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; see https://docs.pytorch.org/xla/master/features/pallas.html
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    # TODO(xla-migrate): XLA806 `add_kernel` holds a `triton.jit`, which is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; see https://docs.pytorch.org/xla/master/features/pallas.html
    add_kernel[grid](x, y, out, n, BLOCK=1024)
    # TODO(xla-migrate): XLA806 `scale_kernel` holds a `triton.autotune`, which is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel (`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; see https://docs.pytorch.org/xla/master/features/pallas.html
    scale_kernel[grid](out, n)
    return out
