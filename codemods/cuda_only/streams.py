"""XLA801-XLA803: CUDA streams, events and graphs are flagged (the migration guide's
"Unsupported Operations", "Debugging and Profiling", "Understanding Lazy Execution");
under TorchTPU, whose ``torch.tpu`` has streams and events, those are converted."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.common import (
    GUIDE,
    PROFILING_DOC,
    TPU_COMPILE_BACKEND,
    TPU_COMPILE_DOC,
    TPU_GUIDE,
    CudaOnlyApi,
    Mirrored,
)
from codemods.shared.definitions import Written
from migrate_xla.rule.api import CUDA_WORD, names_trigger, snippet

STREAM_APIS = (
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.cuda.set_stream",
    "torch.cuda.StreamContext",
    "torch.cuda.ExternalStream",
    "torch.cuda.streams.",
)


class CudaStream(Mirrored):
    """CUDA streams are flagged: XLA has no user-visible streams.

    Guide, "Unsupported Operations": a ``torch.cuda.Stream``, ``with
    torch.cuda.stream(s):`` or ``torch.cuda.current_stream().wait_stream(s)`` orders
    work on an NVIDIA GPU; XLA orders the work of a step itself, so the stream code
    goes and what ran on the side stream runs in order. Names bound to a stream are
    flagged where used (``s.synchronize()``).

    Under ``--runtime torch-tpu`` they are converted: TorchTPU's ``torch.tpu`` mirrors
    ``torch.cuda``'s streams (``Stream``, ``stream``, ``current_stream``,
    ``default_stream``, ``set_stream``), so ``torch.cuda.Stream()`` becomes
    ``torch.tpu.Stream()`` and so on; what ``torch.tpu`` lacks (``StreamContext``,
    ``ExternalStream``) is flagged.
    """

    CODE = "XLA801"
    NAME = "cuda-stream"
    SUMMARY = "torch.cuda.Stream, torch.cuda.stream(...) and wait_stream are flagged"
    TRACK = True
    APIS = {
        api: "is a CUDA stream: XLA has no user streams and orders device work itself; remove it "
        f"and run the code it wrapped in order; see {GUIDE}"
        for api in STREAM_APIS
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            api: "is a CUDA stream API that `torch.tpu` does not mirror: use `torch.tpu.Stream`, "
            "`torch.tpu.stream(s)` and `torch.tpu.current_stream()`, or remove it and run the code it "
            f"wrapped in order; see {TPU_GUIDE}"
            for api in STREAM_APIS
        }
    }
    MIRRORED = "TorchTPU's `torch.tpu` has the streams `torch.cuda` has, and orders work on the TPU with them"
    # A finding needs a name under one of APIS (a tracked name was first one of them)
    TRIGGERS = (names_trigger(*APIS),)
    REQUIRES = (CUDA_WORD,)
    BEFORE = "side = torch.cuda.Stream()\nwith torch.cuda.stream(side):\n    y = model(x)\n"
    AFTER = (
        f"# TODO(xla-migrate): XLA801 `torch.cuda.Stream` {APIS['torch.cuda.Stream']}\n"
        "side = torch.cuda.Stream()\n"
        f"# TODO(xla-migrate): XLA801 `torch.cuda.stream` {APIS['torch.cuda.Stream']}\n"
        "with torch.cuda.stream(side):\n    y = model(x)\n"
    )


XLA_EVENT = "XlaTimingEvent"
# What a torch.cuda.Event becomes on XLA: its timing, on the wall clock once the device has run
# the work traced so far. Its imports are its own: the file may bind `time` to something else.
XLA_EVENT_SOURCE = f'''
class {XLA_EVENT}:
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
'''
XLA_EVENT_WHY = (
    f"`{XLA_EVENT}`, defined in the file: XLA runs a step's work lazily, so its `record()` runs "
    "and waits for the work traced so far (`torch_xla.sync(wait=True)`) before it reads the wall "
    f"clock, and `elapsed_time()` is milliseconds between two records, as a CUDA event's; see {PROFILING_DOC}"
)


class CudaEvent(Mirrored):
    """CUDA events become an event that times on the wall clock once the device is done.

    Guide, "Debugging and Profiling": GPU timing tools do not see XLA work, and XLA runs
    a step lazily, when ``torch_xla.sync()`` comes, so ``start.record()`` /
    ``end.elapsed_time(start)`` on a CUDA event would measure nothing (and fail without
    an NVIDIA driver). ``torch.cuda.Event(...)`` becomes ``XlaTimingEvent(...)``, a small
    class the fix defines after the file's imports: its ``record()`` waits for the work
    traced so far (``torch_xla.sync(wait=True)``, which also ends the graph there) and
    reads ``time.perf_counter()``; ``elapsed_time``, ``wait``, ``query`` and
    ``synchronize`` keep their meaning. The calls on the events stay as written.

    Under ``--runtime torch-tpu`` TorchTPU runs eagerly and its ``torch.tpu`` mirrors
    ``torch.cuda.Event``, so ``torch.cuda.Event(enable_timing=True)`` becomes
    ``torch.tpu.Event(enable_timing=True)`` and its ``record()`` / ``elapsed_time()`` calls stay.
    """

    CODE = "XLA802"
    NAME = "cuda-event"
    SUMMARY = "torch.cuda.Event timing becomes a wall-clock event that waits for the device"
    TRACK = True
    APIS = {
        api: "is a CUDA event: XLA runs work lazily, so it times nothing; time a region with "
        "`torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with "
        f"`torch_xla.debug.profiler`; see {PROFILING_DOC}"
        for api in ("torch.cuda.Event", "torch.cuda.streams.Event")
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            api: "is a CUDA event API that `torch.tpu` does not mirror: time with `torch.tpu.Event("
            "enable_timing=True)`, its `record()` and `elapsed_time()`, or with `torch.tpu.synchronize()` "
            f"then `time.perf_counter()`; see {TPU_GUIDE}"
            for api in APIS
        }
    }
    MIRRORED = "TorchTPU runs eagerly and its `torch.tpu` has the events `torch.cuda` has, which record TPU work"
    TRIGGERS = (names_trigger(*APIS),)  # as XLA801's
    REQUIRES = (CUDA_WORD,)
    BEFORE = "import time\n\nstart = torch.cuda.Event(enable_timing=True)\nstart.record()\n"
    AFTER = f"import time\n\n{XLA_EVENT_SOURCE}\n\nstart = {XLA_EVENT}(enable_timing=True)\nstart.record()\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.written = Written(ctx, {XLA_EVENT: XLA_EVENT_SOURCE})

    def converts(self, node: cst.CSTNode, api: str) -> bool:
        if self.ctx.runtime != "torch-xla":
            return super().converts(node, api)
        if (self.qualname(node) or "") not in self.APIS:  # an attribute of the class
            return False
        self.mirrors[id(node)] = XLA_EVENT
        return True

    def _mirror(self, original: cst.CSTNode, updated: cst.CSTNode):
        if self.ctx.runtime != "torch-xla":
            return super()._mirror(original, updated)
        if self.mirrors.pop(id(original), None) is None:
            return updated
        replacement = cst.Name(XLA_EVENT, lpar=updated.lpar, rpar=updated.rpar)
        replaced = self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> {XLA_EVENT_WHY}",
            drop_if_unused=self.ctx.import_behind(original),
        )
        if replaced is not updated:
            self.written.use(XLA_EVENT)
        return replaced

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)


class CudaGraph(CudaOnlyApi):
    """CUDA graph capture is flagged: XLA compiles each step into a cached graph already.

    Guide, "Understanding Lazy Execution": what ``torch.cuda.CUDAGraph`` /
    ``torch.cuda.graph`` / ``make_graphed_callables`` buy on a GPU (one launch for a
    whole step) is how XLA always runs. The capture, its static input buffers and
    ``graph.replay()`` go; call the model directly. Names bound to a graph are flagged
    where used (``g.replay()``). Under ``--runtime torch-tpu`` too (``torch.tpu`` has no
    graphs): the message names ``torch.compile(..., backend="tpu")``, which compiles a
    whole step.
    """

    CODE = "XLA803"
    NAME = "cuda-graph"
    SUMMARY = "torch.cuda.CUDAGraph, torch.cuda.graph and make_graphed_callables are flagged"
    TRACK = True
    APIS = {
        api: "captures a CUDA graph: XLA already compiles each step into one cached graph; call the "
        f"model directly and drop the capture, its static buffers and `replay()`; see {GUIDE}"
        for api in (
            "torch.cuda.CUDAGraph",
            "torch.cuda.graph",
            "torch.cuda.graphs.",
            "torch.cuda.make_graphed_callables",
        )
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            api: "captures a CUDA graph, which TorchTPU does not have: drop the capture, its static buffers "
            f'and `replay()` and call the model directly, or compile it with `torch.compile(model, backend="'
            f'{TPU_COMPILE_BACKEND}")`, which runs a whole step as one graph; see {TPU_COMPILE_DOC}'
            for api in APIS
        }
    }
    TRIGGERS = (names_trigger(*APIS),)  # as XLA801's
    REQUIRES = (CUDA_WORD,)
    BEFORE = "g = torch.cuda.CUDAGraph()\ng.replay()\n"
    AFTER = (
        f"# TODO(xla-migrate): XLA803 `torch.cuda.CUDAGraph` {APIS['torch.cuda.CUDAGraph']}\n"
        "g = torch.cuda.CUDAGraph()\n"
        f"# TODO(xla-migrate): XLA803 `g` holds a `torch.cuda.CUDAGraph`, which {APIS['torch.cuda.CUDAGraph']}\n"
        "g.replay()\n"
    )
