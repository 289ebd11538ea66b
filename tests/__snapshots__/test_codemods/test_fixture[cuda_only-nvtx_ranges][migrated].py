"""NVTX ranges in a training loop: context managers, decorators, push/pop pairs and leftovers. [XLA105, XLA201, XLA804]"""

import torch
import torch.cuda.nvtx as nvtx
from torch.cuda import profiler
import torch_xla
import torch_xla.debug.profiler as xp


@xp.trace_me("forward")
def forward(model, x):
    return model(x)


def train(model, loader, optimizer, epochs):
    # TODO(xla-migrate): XLA804 `profiler.start` drives the CUDA profiler (nsys, nvprof), which does not see XLA work: capture with `xp.start_trace(log_dir)` / `xp.stop_trace()` (`import torch_xla.debug.profiler as xp`) and view in TensorBoard or xprof; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
    profiler.start()
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            # TODO(xla-migrate): XLA804 `nvtx.range_push` marks a region that runs a training step (a loop, a sync or a step call): torch_xla raises "Expecting scope to be empty" when `torch_xla.sync()` runs inside an `xp.Trace`, so label the parts of the step with `with xp.Trace(name):` and capture whole steps with `xp.start_trace(log_dir)` (`import torch_xla.debug.profiler as xp`); see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
            nvtx.range_push("step {}".format(step))
            with xp.Trace("zero_grad {}".format(step)):
                optimizer.zero_grad()
            with xp.Trace("backward"):
                loss = torch.nn.functional.mse_loss(forward(model, x), y)
                loss.backward()
            optimizer.step()
            torch_xla.sync()
            # the step ends here
            # TODO(xla-migrate): XLA804 `nvtx.range_pop` marks a region that runs a training step (a loop, a sync or a step call): torch_xla raises "Expecting scope to be empty" when `torch_xla.sync()` runs inside an `xp.Trace`, so label the parts of the step with `with xp.Trace(name):` and capture whole steps with `xp.start_trace(log_dir)` (`import torch_xla.debug.profiler as xp`); see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
            nvtx.range_pop()  # step
        # TODO(xla-migrate): XLA804 `nvtx.range_push` is an NVTX marker with no one-to-one XLA counterpart: label the region with `with xp.Trace(name):` (`import torch_xla.debug.profiler as xp`), pushing and popping in one block; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
        nvtx.range_push(f"epoch {epoch}")
    # TODO(xla-migrate): XLA804 `nvtx.range_pop` is an NVTX marker with no one-to-one XLA counterpart: label the region with `with xp.Trace(name):` (`import torch_xla.debug.profiler as xp`), pushing and popping in one block; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
    nvtx.range_pop()
    # TODO(xla-migrate): XLA804 `nvtx.mark` is an NVTX marker with no one-to-one XLA counterpart: label the region with `with xp.Trace(name):` (`import torch_xla.debug.profiler as xp`), pushing and popping in one block; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
    nvtx.mark("done")
    # TODO(xla-migrate): XLA804 `profiler.stop` drives the CUDA profiler (nsys, nvprof), which does not see XLA work: capture with `xp.start_trace(log_dir)` / `xp.stop_trace()` (`import torch_xla.debug.profiler as xp`) and view in TensorBoard or xprof; see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
    profiler.stop()


# TODO(xla-migrate): XLA804 `torch.autograd.profiler.emit_nvtx` emits NVTX ranges for the CUDA profiler, which does not see XLA work: capture with `xp.start_trace(log_dir)` / `xp.stop_trace()` (`import torch_xla.debug.profiler as xp`); see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
with torch.autograd.profiler.emit_nvtx():
    train(torch.nn.Linear(4, 4), [], None, 0)
# TODO(xla-migrate): XLA804 `torch.cuda.nvtx.range` marks a region that runs a training step (a loop, a sync or a step call): torch_xla raises "Expecting scope to be empty" when `torch_xla.sync()` runs inside an `xp.Trace`, so label the parts of the step with `with xp.Trace(name):` and capture whole steps with `xp.start_trace(log_dir)` (`import torch_xla.debug.profiler as xp`); see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm
with torch.cuda.nvtx.range("training"):  # a whole run: its syncs would sit inside a trace
    train(torch.nn.Linear(4, 4), [], None, 1)
