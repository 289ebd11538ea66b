"""CUDA streams and events used for overlap and timing: no automatic XLA rewrite. [XLA801, XLA802]"""

import torch

# TODO(xla-migrate): XLA801 `torch.cuda.Stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
side = torch.cuda.Stream()
# TODO(xla-migrate): XLA802 `torch.cuda.Event` is a CUDA event: XLA runs work lazily, so it times nothing; time a region with `torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with `torch_xla.debug.profiler`; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
start = torch.cuda.Event(enable_timing=True)
# TODO(xla-migrate): XLA802 `torch.cuda.Event` is a CUDA event: XLA runs work lazily, so it times nothing; time a region with `torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with `torch_xla.debug.profiler`; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
end = torch.cuda.Event(enable_timing=True)

x = torch.randn(256, 256)
# TODO(xla-migrate): XLA802 `start` holds a `torch.cuda.Event`, which is a CUDA event: XLA runs work lazily, so it times nothing; time a region with `torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with `torch_xla.debug.profiler`; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
start.record()
# TODO(xla-migrate): XLA801 `torch.cuda.stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.stream(side):
    y = x @ x
# TODO(xla-migrate): XLA801 `torch.cuda.current_stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.cuda.current_stream().wait_stream(side)
# TODO(xla-migrate): XLA802 `end` holds a `torch.cuda.Event`, which is a CUDA event: XLA runs work lazily, so it times nothing; time a region with `torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with `torch_xla.debug.profiler`; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
end.record()
# TODO(xla-migrate): XLA802 `start` holds a `torch.cuda.Event`, which is a CUDA event: XLA runs work lazily, so it times nothing; time a region with `torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with `torch_xla.debug.profiler`; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
print("matmul took", start.elapsed_time(end), "ms")
