"""What the TPU report reads of the migrated run on XLA (migrate_xla/verify/tpu_report.py):
one training step after the warm-up, as the device runs it.

The window is the last whole step: from the next-to-last optimizer step of the run to the
last (backward passes where the script updates its parameters by hand; ``steps`` 1: from
the first to the end). In it:
- every graph the step runs is written as torch_xla lowers it (StableHLO text; with the
  harness's XLA_HLO_DEBUG=1 each operation carries the Python stack that traced it), just
  before it runs: at ``torch_xla.sync()`` (also MpDeviceLoader's, ``xm.mark_step()``'s), or
  at a read of a value whose graph has to run first (``.item()``, ``print``, ``if t:``), with
  the stack that cut the step there;
- the bytes moved between host and device: torch_xla's counts of the window (its
  OutboundData and InboundData metrics; DeviceDataCacheMiss for Python numbers made device
  data), each transfer given to the outermost torch call of the script that made it (a torch
  function mode, for the window only) and its Python stack; MpDeviceLoader's thread moves
  batches ahead of the steps, so its bytes are counted by batch over the run;
- the bytes of the parameters and of the optimizers' state.
Markers around the window go into torch_xla's debug output (PT_XLA_DEBUG_FILE, where the
harness asked for it), so the report counts the graph executions torch_xla saw in it.

Python stacks are recorded for the window only: torch_xla records the stack of every traced
operation while its IR debugging is on (XLA_HLO_DEBUG turns it on at start), so it is off
from the first optimizer step to the step before the window. The capture costs a lowering
per graph of the window (what torch_xla does when it compiles one) and a walk of the live
objects to find the tensors a sync will compute; nothing outside the window. In float64 mode
a float64 tensor stands for the script's float32 one: its bytes count 4 a number. Nothing of
it ever fails the script's run: what went wrong is recorded and the capture stops.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time

import torch
from torch.overrides import TorchFunctionMode

from .shared import _is_ours, _live_optimizers

MAX_FRAMES = 16  # of each stack kept: the user's frame is among the innermost
# torch calls that copy a tensor's values to the host (and run its pending graph first)
READS = ("item", "tolist", "cpu", "numpy", "__float__", "__int__", "__bool__", "__index__", "__repr__", "__format__")


def _stack(depth: int = 2) -> list[dict]:
    """The caller's Python stack, innermost first, without the instrumentation's frames."""
    frames, frame = [], sys._getframe(depth)
    while frame is not None and len(frames) < MAX_FRAMES:
        if not _is_ours(frame.f_globals.get("__name__", "")):
            frames.append({"file": frame.f_code.co_filename, "line": frame.f_lineno, "function": frame.f_code.co_name})
        frame = frame.f_back
    return frames


def _by_instrumentation(name: str) -> bool:
    """Whether a move (``to``, ``copy_``) comes from verify's other instruments (the aligned
    random numbers draw on the host and move the draws to the device), not from the script:
    the first caller that is neither this module, installed code nor a torch function mode's
    handler (float64 mode's passes the script's calls on) is theirs. What else they call (an
    LSTM layer by layer) computes the script's own work."""
    if name not in ("to", "copy_"):
        return False
    frame = sys._getframe(2)
    while frame is not None:
        module, file = frame.f_globals.get("__name__", ""), frame.f_code.co_filename
        library = "site-packages" in file or "/lib/python3" in file or file.startswith("<")
        if not (module == __name__ or library or frame.f_code.co_name == "__torch_function__"):
            return _is_ours(module)
        frame = frame.f_back
    return False


def _on_device(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "xla"


def _on_host(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "cpu"


def _native_bytes(tensor, float64: bool) -> int:
    """The bytes of ``tensor`` in the script's own precision: in float64 mode a float64 number is 4."""
    return tensor.numel() * (4 if float64 and tensor.dtype == torch.float64 else tensor.element_size())


class _Watch(TorchFunctionMode):
    """The window's torch calls, each seen once (a mode is off while its handler runs): the
    graph a read runs first is captured, the transfers a call makes are noted. Entered while
    another mode's handler runs (a backward pass under float64 mode opens the window of a
    script that updates by hand), it ends up below that mode and sees the calls it passes on."""

    def __init__(self, capture: TpuCapture) -> None:
        super().__init__()
        self.capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.capture.open:
            return func(*args, **kwargs)
        return self.capture._call(getattr(func, "__name__", ""), func, args, kwargs)


class TpuCapture:
    def __init__(self, config: dict, models) -> None:
        self.models = models  # () -> the (name, parameter) pairs of the script's models (the recorder's)
        steps = config["steps"]
        self.first = max(1, steps - 1)  # the window opens at this step ...
        self.last = steps if steps > 1 else None  # ... and closes at this one (None: at the end)
        self.float64 = bool(config.get("float64"))
        self.record_dir = config["record_dir"]
        # torch_xla's debug output where the harness asked for it (in the run's folder), not the user's own
        debug_file = os.environ.get("PT_XLA_DEBUG_FILE", "")
        in_records = os.path.dirname(os.path.abspath(debug_file)) == os.path.abspath(self.record_dir)
        self.debug_file = debug_file if debug_file and in_records else None
        # stacks are recorded only around the window, unless the user asked torch_xla for them
        self.toggle_stacks = "XLA_IR_DEBUG" not in os.environ
        self.open = False
        self.done = False
        self.step_seen = 0
        self.error: str | None = None  # the first thing that went wrong (what stopped the capture, where it stopped)
        self.graphs: list[dict] = []
        self.sites: dict[tuple, dict] = {}
        self.instrumentation: dict[str, dict] = {}  # what verify's own instruments moved, by direction
        self.loader = {"batches": 0, "bytes": 0, "raw_bytes": 0, "shape": []}  # MpDeviceLoader's, the whole run
        self.lock = threading.Lock()
        self.patched: list[tuple] = []
        self.watch: _Watch | None = None
        self.at_open: dict = {}
        self.state: dict = {}
        self.spmd_devices: int | None = None  # under SPMD the graph is the whole program, before partitioning
        self.sharding: dict | None = None  # under SPMD, each parameter's layout (sharding_report.py)
        self.gradients_read = False  # their layouts, once the window's first sync computed them
        self.record: dict | None = None
        self.seconds = 0.0  # spent capturing: the lowerings, the live objects' walk, the calls' bookkeeping

    # -- the recorder's events -------------------------------------------------------
    def on_step(self, step: int, compiled: list[dict]) -> None:
        """At the end of optimizer step ``step`` (at the start of backward pass ``step`` where the
        script updates its parameters by hand)."""
        if step <= self.step_seen:
            return
        self.step_seen = step
        try:
            self._on_step(step, compiled)
        except Exception as exc:
            self._fail(exc)

    def finish(self) -> dict | None:
        """At the end of the run (after verify's own last sync): the record, the window closed."""
        if self.open:
            try:
                self._close(None)
            except Exception as exc:
                self._fail(exc)
        return self.record

    def _on_step(self, step: int, compiled: list[dict]) -> None:
        import torch_xla  # it runs here (the recorder asked)

        if self.done:
            return
        if any(site.get("ran") == "compiled" for site in compiled):
            # Dynamo's graphs run outside the step's sync, and lowering the live tensors at the
            # sync of compiled_gpt.py made torch_xla compile its step's graph again
            self.done = True
            self.record = {
                "skipped": "torch.compile'd code runs its graphs through Dynamo, which the report cannot read"
            }
            return
        if step == 1:
            self._count_loader_batches()
        if self.toggle_stacks and step == 1 and self.first > 2:
            torch_xla._XLAC._set_ir_debug(False)  # no stacks until the step before the window
        if self.toggle_stacks and step == self.first - 1:
            torch_xla._XLAC._set_ir_debug(True)  # the window's first graph is traced in the step before it
        if step == self.first and not self.open and not self.done:
            self._open(step)
        elif step == self.last and self.open:
            self._close(step)

    def _fail(self, exc: Exception) -> None:
        self.error = f"{type(exc).__name__}: {exc}"[:500]
        self.open, self.done = False, True
        self._unpatch()
        self.record = {"error": self.error, "window": {"from_step": self.first}}

    # -- the window --------------------------------------------------------------------
    def _open(self, step: int) -> None:
        started = time.perf_counter()
        self._marker(f"open at step {step}")
        self.at_open = _transfer_counts()
        self.loader_at_open = dict(self.loader)
        self.state = _state_bytes([p for _, p in self.models()], self.float64)
        self.spmd_devices = _spmd_devices()
        if self.spmd_devices:
            self.sharding = _layouts(self.models(), self.float64, self.spmd_devices)
        self._patch()
        self.open = True
        self.seconds += time.perf_counter() - started

    def _close(self, step: int | None) -> None:
        started = time.perf_counter()
        self.open, self.done = False, True
        self._unpatch()
        counts = _transfer_counts()
        self._marker(f"close at step {step}" if step else "close at the end")
        moved = {key: counts[key] - self.at_open.get(key, 0) for key in counts}
        for key in ("batches", "raw_bytes"):  # the loader's in the window: counted by batch instead
            moved[f"loader_{key}"] = self.loader[key] - self.loader_at_open[key]
        self.seconds += time.perf_counter() - started
        self.record = {
            "window": {"from_step": self.first, "to_step": step},
            "graphs": self.graphs,
            "transfers": moved,
            "sites": list(self.sites.values()),
            "instrumentation": self.instrumentation,
            "loader": self.loader,
            "state": self.state,
            "spmd_devices": self.spmd_devices,
            "sharding": self.sharding,
            "float64": self.float64,
            "seconds": self.seconds,
            "error": self.error,
        }

    def _marker(self, what: str) -> None:
        if self.debug_file:
            with open(self.debug_file, "a") as handle:
                handle.write(f"xla-migrate tpu-report window {what}\n")

    def _patch(self) -> None:
        """``torch_xla.sync`` captures the step's graph first; a torch function mode watches the
        window's calls."""
        import torch_xla
        import torch_xla.torch_xla as module

        capture, sync = self, module.sync

        def capturing_sync(*args, **kwargs):
            try:
                capture._capture("sync", "torch_xla.sync")
            except Exception as exc:
                capture.error = capture.error or f"{type(exc).__name__}: {exc}"[:500]
            result = sync(*args, **kwargs)
            try:
                capture._computed_gradients()
            except Exception as exc:
                capture.error = capture.error or f"{type(exc).__name__}: {exc}"[:500]
            return result

        # torch_xla.sync itself stays the innermost frame: torch_xla's debug output tells the
        # cause of a graph by it ("user torch_xla.sync"). MpDeviceLoader, xm.mark_step and
        # torch_xla.step() call it by these names.
        for owner in (torch_xla, module):
            self.patched.append((owner, "sync", sync))
            owner.sync = capturing_sync
        self.watch = _Watch(self)
        self.watch.__enter__()

    def _computed_gradients(self) -> None:
        """Under SPMD, the layouts of the gradients the window opened with still to compute (a
        backward pass's new tensors have none until their graph runs: they read as whole), read
        again once the window's first sync has run that graph."""
        if self.sharding is None or self.gradients_read:
            return
        self.gradients_read = True
        for entry, (_, p) in zip(self.sharding["parameters"], self.models()):
            if entry["grad"] is not None and not entry["grad"][1] and p.grad is not None:
                entry["grad"] = _layout(p.grad, self.float64)

    def _unpatch(self) -> None:
        for owner, name, original in reversed(self.patched):
            setattr(owner, name, original)
        self.patched.clear()
        watch, self.watch = self.watch, None
        # the mode leaves the stack where it is on top (where it is not, a mode the script
        # entered since is above it: it stays, and passes every call through)
        if watch is not None and torch._C._len_torch_function_stack() > 0:
            if torch._C._get_function_stack_at(torch._C._len_torch_function_stack() - 1) is watch:
                watch.__exit__(None, None, None)

    # -- graphs ----------------------------------------------------------------------------
    def _capture(self, trigger: str, what: str, tensor=None) -> None:
        """The graph about to run, lowered: at a sync the pending work of every tensor the
        script can reach, at a read what ``tensor`` needs. (Given no tensor, torch_xla would
        lower every live one, giving those it holds data for an IR node of that data, which
        outlives the buffer a graph then donates: a later read of it failed.)"""
        from torch_xla import _XLAC

        started = time.perf_counter()
        if tensor is None:
            live = [obj for obj in gc.get_objects() if isinstance(obj, torch.Tensor) and obj.device.type == "xla"]
            pending = [t for t, needed in zip(live, _XLAC._check_tensor_need_materialization(live)) if needed]
        else:
            pending = [tensor]
        device = str(pending[0].device) if pending else _XLAC._xla_get_default_device()
        text = _XLAC._get_stablehlo(pending, device, [], False) if pending else b""
        name = f"tpu-graph-{os.getpid()}-{len(self.graphs)}.mlir"
        with open(os.path.join(self.record_dir, name), "wb") as handle:
            handle.write(text)
        self.graphs.append({"file": name, "trigger": trigger, "what": what, "stack": _stack(3)})
        self.seconds += time.perf_counter() - started

    # -- transfers ------------------------------------------------------------------------
    def _call(self, name: str, func, args, kwargs):
        """``func(*args, **kwargs)``, the graph a read runs first captured, the transfers it
        makes noted (what fails of that is recorded, never raised)."""
        read, before = None, None
        try:
            read = self._before(name, args, kwargs)
            before = {**_transfer_counts(), "loader": self.loader["raw_bytes"]}
        except Exception as exc:
            self.error = self.error or f"{type(exc).__name__}: {exc}"[:500]
        result = func(*args, **kwargs)
        try:
            if before is not None:
                self._after(name, args, result, read, before)
        except Exception as exc:
            self.error = self.error or f"{type(exc).__name__}: {exc}"[:500]
        return result

    def _before(self, name: str, args, kwargs):
        """The device tensor a read copies to the host, its graph captured where it must run first."""
        if name in READS or (name == "to" and _to_host(args[1:], kwargs)):
            read = args[0] if args else None
        elif name == "copy_" and len(args) > 1 and _on_host(args[0]):
            read = args[1]  # host.copy_(device)
        else:
            return None
        if not _on_device(read):
            return None
        started = time.perf_counter()
        from torch_xla import _XLAC

        if _XLAC._check_tensor_need_materialization([read])[0]:
            self._capture("read", name, read)
        self.seconds += time.perf_counter() - started
        return read

    def _after(self, name: str, args, result, read, before: dict) -> None:
        """What torch_xla moved during the call, given to it; the known tensor of a move gives the
        shape and, in float64 mode, the script's own bytes. (What moves between the calls the mode
        sees, the report counts as no call's.)"""
        started = time.perf_counter()
        counts = _transfer_counts()
        for direction, tensor in (
            ("to_device", args[0] if name in ("to", "copy_") and _on_host(args[0]) else result),
            ("from_device", read),
        ):
            count = counts[f"{direction}_count"] - before[f"{direction}_count"]
            moved = counts[f"{direction}_bytes"] - before[f"{direction}_bytes"]
            if direction == "to_device":  # the loader's thread moves at the same time: not this call's
                moved -= self.loader["raw_bytes"] - before["loader"]
            if count > 0 and moved > 0:
                known = isinstance(tensor, torch.Tensor) and tensor.numel() * tensor.element_size() == moved
                native = _native_bytes(tensor, self.float64) if known else moved
                self._note(direction, name, count, moved, native, tensor if known else None)
        self.seconds += time.perf_counter() - started

    def _note(self, direction: str, what: str, count: int, raw: int, native: int, tensor) -> None:
        if _by_instrumentation(what):  # verify's own (the aligned random numbers' masks): not the script's
            ours = self.instrumentation.setdefault(direction, {"count": 0, "bytes": 0})
            ours["count"] += count
            ours["bytes"] += raw
            return
        stack = _stack(3)
        key = (direction, what, tuple((f["file"], f["line"]) for f in stack[:6]))
        site = self.sites.setdefault(
            key,
            {
                "direction": direction,
                "what": what,
                "stack": stack,
                "count": 0,
                "bytes": 0,
                "native_bytes": 0,
                "shape": list(tensor.shape) if tensor is not None else None,
            },
        )
        site["count"] += count
        site["bytes"] += raw
        site["native_bytes"] += native

    def _count_loader_batches(self) -> None:
        """MpDeviceLoader's thread moves batches ahead of the steps (8 and more): its bytes are
        counted by batch over the whole run, a batch a step."""
        from torch_xla.distributed import parallel_loader

        send, loader, float64 = parallel_loader.ParallelLoader.send_cpu_data_to_device, self.loader, self.float64

        def counting_send(self, batches, *args, **kwargs):
            for batch in batches if isinstance(batches, list) else ():
                tensors: list = []
                _flatten(batch, tensors)
                tensors = [t for t in tensors if _on_host(t)]
                loader["batches"] += 1
                loader["bytes"] += sum(_native_bytes(t, float64) for t in tensors)
                loader["raw_bytes"] += sum(t.numel() * t.element_size() for t in tensors)
                loader["shape"] = loader["shape"] or (list(tensors[0].shape) if tensors else [])
            return send(self, batches, *args, **kwargs)

        parallel_loader.ParallelLoader.send_cpu_data_to_device = counting_send  # the rest of the run: a sum a batch


def _to_host(args, kwargs) -> bool:
    """Whether ``Tensor.to(*args, **kwargs)`` moves to the host: a CPU device or a host tensor."""
    for value in (*args, kwargs.get("device")):
        if isinstance(value, torch.Tensor):
            return value.device.type == "cpu"
        if isinstance(value, (str, torch.device)) and str(value).split(":")[0] == "cpu":
            return True
    return False


def _spmd_devices() -> int | None:
    """The devices an SPMD program is partitioned over; None without SPMD."""
    import torch_xla.runtime as xr

    return xr.global_runtime_device_count() if xr.is_spmd() else None


def _flatten(data, into: list) -> None:
    """The tensors in a batch (tensors, lists, tuples, dicts of them)."""
    if isinstance(data, torch.Tensor):
        into.append(data)
    elif isinstance(data, (list, tuple)):
        for item in data:
            _flatten(item, into)
    elif isinstance(data, dict):
        for item in data.values():
            _flatten(item, into)


def _transfer_counts() -> dict:
    """torch_xla's cumulative counts of host-device transfers: OutboundData is what the host
    sends, InboundData what it receives; DeviceDataCacheMiss counts Python numbers made device
    data (a learning rate that changes every step)."""
    from torch_xla import _XLAC

    counts = {}
    for key, metric in (("to_device", "OutboundData"), ("from_device", "InboundData")):
        data = _XLAC._xla_metric_data(metric)
        counts[f"{key}_count"], counts[f"{key}_bytes"] = (int(data[0]), int(data[1])) if data else (0, 0)
    counts["numbers_to_device"] = _XLAC._xla_counter_value("DeviceDataCacheMiss") or 0
    return counts


def _state_bytes(models: list, float64: bool) -> dict:
    """The bytes of the models' parameters (and those the optimizers hold) and of the
    optimizers' state (momentum, Adam's moments), each tensor once; in float64 mode a float64
    number counts 4 bytes."""
    seen: set[int] = set()
    parameters = state = 0
    held = [p for optimizer in list(_live_optimizers) for group in optimizer.param_groups for p in group["params"]]
    for p in [*models, *held]:
        if id(p) not in seen:
            seen.add(id(p))
            parameters += _native_bytes(p, float64)
    for optimizer in list(_live_optimizers):
        for values in optimizer.state.values():
            for value in values.values() if isinstance(values, dict) else ():
                if isinstance(value, torch.Tensor) and id(value) not in seen and value.numel() > 1:
                    seen.add(id(value))
                    state += _native_bytes(value, float64)
    return {"parameters": parameters, "optimizer": state, "optimizers": len(_live_optimizers)}


def _layout(tensor, float64: bool) -> list:
    """A tensor's bytes and its layout as torch_xla holds it (its HLO sharding; "" where none)."""
    from torch_xla import _XLAC

    return [_native_bytes(tensor, float64), _XLAC._get_xla_sharding_spec(tensor)]


def _layouts(models: list, float64: bool, devices: int) -> dict:
    """Under SPMD, each parameter's layout as torch_xla holds it (the tensor's HLO sharding, ""
    where none was marked) with its bytes, its gradient's where it has one and its optimizer
    state's, and the axes xla-migrate's written functions kept (``xla_partition_spec``); the
    global mesh's shape and axes."""
    import torch_xla.distributed.spmd as xs

    state_of = {id(p): state for optimizer in list(_live_optimizers) for p, state in optimizer.state.items()}
    parameters = []
    for name, p in models:
        bytes_, sharding = _layout(p, float64)
        state = state_of.get(id(p), {})
        parameters.append(
            {
                "name": name,
                "shape": list(p.shape),
                "bytes": bytes_,
                "sharding": sharding,
                "axes": getattr(p, "xla_partition_spec", None),
                "grad": _layout(p.grad, float64) if p.grad is not None else None,
                "state": [_layout(v, float64) for v in state.values() if isinstance(v, torch.Tensor) and v.numel() > 1],
            }
        )
    mesh = xs.get_global_mesh()
    return {
        "devices": devices,
        "mesh": {"shape": list(mesh.mesh_shape), "axes": list(mesh.axis_names or ())} if mesh else None,
        "parameters": parameters,
    }
