# fixture: runtime=torch-tpu
"""Under TorchTPU: CUDA graphs have no counterpart and are flagged (torch.compile with the "tpu"
backend named); NVTX ranges and the CUDA profiler are flagged, not converted to PyTorch/XLA's
profiler. [XLA803, XLA804]"""

import torch


def run(model, static_input, batch):
    # TODO(xla-migrate): XLA803 `torch.cuda.CUDAGraph` captures a CUDA graph, which TorchTPU does not have: drop the capture, its static buffers and `replay()` and call the model directly, or compile it with `torch.compile(model, backend="tpu")`, which runs a whole step as one graph; see https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    g = torch.cuda.CUDAGraph()
    # TODO(xla-migrate): XLA803 `torch.cuda.graph` captures a CUDA graph, which TorchTPU does not have: drop the capture, its static buffers and `replay()` and call the model directly, or compile it with `torch.compile(model, backend="tpu")`, which runs a whole step as one graph; see https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    with torch.cuda.graph(g):
        static_output = model(static_input)
    static_input.copy_(batch)
    # TODO(xla-migrate): XLA803 `g` holds a `torch.cuda.CUDAGraph`, which captures a CUDA graph, which TorchTPU does not have: drop the capture, its static buffers and `replay()` and call the model directly, or compile it with `torch.compile(model, backend="tpu")`, which runs a whole step as one graph; see https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    g.replay()
    return static_output


def profiled(model, x):
    # TODO(xla-migrate): XLA804 `torch.cuda.nvtx.range` is an NVTX marker, which TorchTPU's profiler does not read: label the region with `with torch.profiler.record_function(name):` (pushing and popping in one block), or remove it; see https://docs.pytorch.org/docs/stable/profiler.html
    with torch.cuda.nvtx.range("forward"):
        out = model(x)
    # TODO(xla-migrate): XLA804 `torch.cuda.nvtx.range_push` is an NVTX marker, which TorchTPU's profiler does not read: label the region with `with torch.profiler.record_function(name):` (pushing and popping in one block), or remove it; see https://docs.pytorch.org/docs/stable/profiler.html
    torch.cuda.nvtx.range_push("backward")
    out.sum().backward()
    # TODO(xla-migrate): XLA804 `torch.cuda.nvtx.range_pop` is an NVTX marker, which TorchTPU's profiler does not read: label the region with `with torch.profiler.record_function(name):` (pushing and popping in one block), or remove it; see https://docs.pytorch.org/docs/stable/profiler.html
    torch.cuda.nvtx.range_pop()
    # TODO(xla-migrate): XLA804 `torch.cuda.profiler.start` drives the CUDA profiler (nsys, nvprof), which does not see TPU work: capture with `torch.profiler.profile(...)`, or remove it; see https://docs.pytorch.org/docs/stable/profiler.html
    torch.cuda.profiler.start()
    return out
