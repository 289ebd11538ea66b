"""NVTX ranges and CUDA graphs, GPU-only tools the guide says have XLA counterparts to choose by hand. [XLA803, XLA804]"""

import torch
import torch_xla.debug.profiler as xp

model = torch.nn.Linear(16, 16)
static_input = torch.randn(8, 16)

with xp.Trace("warmup"):
    out = model(static_input)

# TODO(xla-migrate): XLA803 `torch.cuda.CUDAGraph` captures a CUDA graph: XLA already compiles each step into one cached graph; call the model directly and drop the capture, its static buffers and `replay()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
graph = torch.cuda.CUDAGraph()
# TODO(xla-migrate): XLA803 `torch.cuda.graph` captures a CUDA graph: XLA already compiles each step into one cached graph; call the model directly and drop the capture, its static buffers and `replay()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.graph(graph):
    static_out = model(static_input)
# TODO(xla-migrate): XLA803 `graph` holds a `torch.cuda.CUDAGraph`, which captures a CUDA graph: XLA already compiles each step into one cached graph; call the model directly and drop the capture, its static buffers and `replay()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
graph.replay()
