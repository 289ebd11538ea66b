"""NVTX ranges and CUDA graphs, GPU-only tools the guide says have XLA counterparts to choose by hand."""

import torch
import torch.cuda as tc

model = torch.nn.Linear(16, 16)
static_input = torch.randn(8, 16)

# TODO(xla-migrate): XLA899 `torch.cuda.nvtx.range_push` is an NVTX range: mark the region with `torch_xla.debug.profiler.Trace(name)` instead; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
torch.cuda.nvtx.range_push("warmup")
out = model(static_input)
# TODO(xla-migrate): XLA899 `tc.nvtx.range_pop` is an NVTX range: mark the region with `torch_xla.debug.profiler.Trace(name)` instead; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
tc.nvtx.range_pop()

# TODO(xla-migrate): XLA899 `torch.cuda.CUDAGraph` captures a CUDA graph: XLA already compiles each step into one cached graph, so call the model directly; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
graph = torch.cuda.CUDAGraph()
# TODO(xla-migrate): XLA899 `torch.cuda.graph` captures a CUDA graph: XLA already compiles each step into one cached graph, so call the model directly; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.graph(graph):
    static_out = model(static_input)
graph.replay()
