"""With ``diagnose``: every operation on the autograd path, forward and backward (OpRecorder)."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

import torch
from torch.overrides import TorchFunctionMode

from .shared import _as_float, _is_ours, _live_optimizers

if TYPE_CHECKING:
    from .recorder import Recorder


# -- with diagnose: every operation on the autograd path, forward and backward ---------------
#
# As Ascend's msprobe does per API: each call of a torch function (F.elu, F.linear, x + y,
# ...) that takes a tensor needing a gradient is recorded with the norm of its output, of
# the gradient that reaches it in the backward pass, and of the gradient it returns for
# each such input. Each input passes through a view of its own first (the same values), so
# the hook on that view sees the gradient this call alone returns for it. The parent lines
# the calls of both runs up by name and finds the first whose output differs while what
# went in agrees: in the forward pass, or in the backward pass (a defect of the runtime's
# backward of that op, say).

MAX_OP_RECORDS = 20000
_NOT_OPS = {"__get__", "__set__", "backward", "register_hook", "retain_grad", "requires_grad_", "detach", "detach_"}


def _norm(tensor):
    with torch.no_grad():
        value = tensor.detach().double().norm()
    return float(value) if value.device.type == "cpu" else value


def _in_place(name: str, kwargs: dict) -> bool:
    return (
        (name.endswith("_") and not name.startswith("__"))
        or name.startswith("__i")
        or name == "__setitem__"
        or "out" in kwargs
        or kwargs.get("inplace") is True
    )


def _user_frame() -> tuple[str | None, int | None]:
    """The innermost caller outside torch and this instrumentation: the line that called the op."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "torch" or module.startswith("torch.") or _is_ours(module)):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None, None


class _OpRecords:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.calls: list[dict] = []
        self.backward_order = 0
        self.lock = threading.Lock()

    def step(self) -> int:
        """The 0-based training step running now (backward passes where the script updates by hand)."""
        return self.recorder.steps if _live_optimizers else len(self.recorder.losses)

    def on_grad_out(self, call: dict, grad) -> None:
        with self.lock:
            self.backward_order += 1
            call["order"] = self.backward_order
        call["grad_out"] = _norm(grad)

    def on_grad_in(self, call: dict, index: int, grad) -> None:
        call["grad_in"][index] = _norm(grad)

    def by_step(self) -> list[list[dict]]:
        steps: list[list[dict]] = []
        values = [v for c in self.calls for v in (c["out"], c.get("grad_out"), *c["grad_in"]) if torch.is_tensor(v)]
        floats = iter([_as_float(v) for v in torch.stack(values).cpu()] if values else [])
        for call in self.calls:
            out = {k: v for k, v in call.items() if k != "step"}
            for key in ("out", "grad_out"):
                if torch.is_tensor(out.get(key)):
                    out[key] = next(floats)
            out["grad_in"] = [next(floats) if torch.is_tensor(v) else v for v in call["grad_in"]]
            while len(steps) <= call["step"]:
                steps.append([])
            steps[call["step"]].append(out)
        return steps


_op_records: _OpRecords | None = None


def _record_ops(recorder: Recorder) -> _OpRecords:
    """The op records OpRecorder fills from now on (the recorder writes them at the end)."""
    global _op_records
    _op_records = _OpRecords(recorder)
    return _op_records


def _probed(value, probes: list):
    """``value`` (an argument) with each tensor needing a gradient replaced by a view of its own."""
    if isinstance(value, torch.Tensor) and value.requires_grad and value.dtype.is_floating_point:
        probe = value.view_as(value)
        probes.append(probe)
        return probe
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) and v.requires_grad for v in value):
        return type(value)(_probed(v, probes) for v in value)
    return value


class OpRecorder(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        records = _op_records
        name = getattr(func, "__name__", "")
        if (
            records is None
            or records.recorder.done
            or not torch.is_grad_enabled()
            or name in _NOT_OPS
            or len(records.calls) >= MAX_OP_RECORDS
        ):
            return func(*args, **kwargs)
        probes: list = []
        if not _in_place(name, kwargs):
            args = tuple(_probed(a, probes) for a in args)
            kwargs = {k: _probed(v, probes) for k, v in kwargs.items()}
        elif not any(isinstance(a, torch.Tensor) and a.requires_grad for a in [*args, *kwargs.values()]):
            return func(*args, **kwargs)
        result = func(*args, **kwargs)
        out = result if isinstance(result, torch.Tensor) else None
        if out is None and isinstance(result, (tuple, list)):
            out = next((r for r in result if isinstance(r, torch.Tensor)), None)
        if out is None or not out.requires_grad or out.grad_fn is None or not out.dtype.is_floating_point:
            return result
        if not probes and not _in_place(name, kwargs):
            return result  # nothing that needs a gradient went in: a factory, say
        file, line = _user_frame()
        call = {
            "step": records.step(),
            "name": name,
            "file": file,
            "line": line,
            "out": _norm(out),
            "grad_out": None,
            "grad_in": [None] * len(probes),
            "order": None,
        }
        records.calls.append(call)
        out.register_hook(lambda grad, call=call: records.on_grad_out(call, grad))
        for index, probe in enumerate(probes):
            probe.register_hook(lambda grad, call=call, index=index: records.on_grad_in(call, index, grad))
        return result
