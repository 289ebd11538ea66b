"""CUDA streams and events used for overlap and timing: no automatic XLA rewrite."""

import torch

# TODO(xla-migrate): XLA899 `torch.cuda.Stream` is a CUDA stream or event: XLA orders device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
side = torch.cuda.Stream()
# TODO(xla-migrate): XLA899 `torch.cuda.Event` is a CUDA stream or event: XLA orders device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
start = torch.cuda.Event(enable_timing=True)
# TODO(xla-migrate): XLA899 `torch.cuda.Event` is a CUDA stream or event: XLA orders device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
end = torch.cuda.Event(enable_timing=True)

x = torch.randn(256, 256)
start.record()
# TODO(xla-migrate): XLA899 `torch.cuda.stream` is a CUDA stream or event: XLA orders device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.stream(side):
    y = x @ x
# TODO(xla-migrate): XLA899 `torch.cuda.current_stream` is a CUDA stream or event: XLA orders device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.cuda.current_stream().wait_stream(side)
end.record()
print("matmul took", start.elapsed_time(end), "ms")
