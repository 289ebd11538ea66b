"""CUDA streams and events used for overlap and timing: the stream is flagged (no automatic XLA
rewrite), the events become wall-clock events that wait for the device. [XLA801, XLA802]"""

import torch


class XlaTimingEvent:
    """torch.cuda.Event's timing on XLA, written by xla-migrate (XLA802): record() runs the work
    traced so far and waits for it (torch_xla.sync(wait=True)), then reads the wall clock."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.time = None

    def record(self, stream=None):
        import time

        import torch_xla

        torch_xla.sync(wait=True)
        self.time = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        return (end_event.time - self.time) * 1000.0


# TODO(xla-migrate): XLA801 `torch.cuda.Stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
side = torch.cuda.Stream()
start = XlaTimingEvent(enable_timing=True)
end = XlaTimingEvent(enable_timing=True)

x = torch.randn(256, 256)
start.record()
# TODO(xla-migrate): XLA801 `torch.cuda.stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.stream(side):
    y = x @ x
# TODO(xla-migrate): XLA801 `torch.cuda.current_stream` is a CUDA stream: XLA has no user streams and orders device work itself; remove it and run the code it wrapped in order; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.cuda.current_stream().wait_stream(side)
end.record()
print("matmul took", start.elapsed_time(end), "ms")
