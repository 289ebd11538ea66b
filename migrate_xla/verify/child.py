"""Instrumentation inside each verify child process, installed before the user's code.

``sitecustomize`` (on the PYTHONPATH the harness injects) calls :func:`install` in
every interpreter that has ``XLA_MIGRATE_VERIFY`` in its environment, so processes the
script spawns itself (``torch_xla.launch``, ``mp.spawn``) are instrumented too. Each
process writes its own record (``<role>-<pid>.json``) and the parent merges them.

What it does:
- seeds torch, Python's ``random`` and NumPy with the one seed of the verify run, so
  both runs start from the same state (the script's own seeding still wins), and notes
  whether the script seeds at all;
- records the training loss at every ``backward()`` (the unscaled loss when a
  GradScaler multiplied it);
- counts optimizer steps (backward passes when no optimizer ever steps: a script that
  updates its parameters by hand) and stops the run cleanly after ``steps`` of them;
- aligns random numbers: random factories, in-place random fills, dropout (also
  between the layers of an RNN, LSTM or GRU) and multinomial sampling draw from the CPU
  generator in both runs, so both see the same values;
- in float64 mode (the exactness check), runs the script's floating-point work in
  float64 on both sides, so that rounding no longer hides or fakes a difference;
- at the first step, records the model's parameters (count, tied groups) and whether
  the optimizers hold them; with ``diagnose``, the norm of every parameter and gradient
  at every step;
- in the reference run without a GPU, emulates CUDA on the CPU (the shim); in the
  migrated run of a TorchTPU migration (``--runtime torch-tpu``), emulates the "tpu"
  device and ``torch.tpu`` on the CPU the same way, without torch_xla;
- in the XLA run, reads torch_xla's metrics: compilations and executions by step, CPU
  fallbacks;
- on SIGTERM (the harness's timeout), writes what it recorded so far.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import math
import os
import random
import signal
import sys
import threading
import types
import weakref

import torch
import torch.nn.functional as F
import torch.nn.modules.rnn as rnn_modules
import torch.optim.optimizer as optim_impl
from torch.overrides import TorchFunctionMode

ENV = "XLA_MIGRATE_VERIFY"


class StepLimitReached(SystemExit):
    """Ends the run after the requested optimizer steps (exit status 0).

    A SystemExit passes through ``except Exception`` in user code, and
    ``torch_xla.launch`` / ``mp.spawn`` hand it back to their parent as a clean exit.
    """

    def __init__(self) -> None:
        super().__init__(0)


class Recorder:
    def __init__(self, config: dict) -> None:
        self.role: str = config["role"]
        self.record_dir: str = config["record_dir"]
        self.max_steps: int = config["steps"]
        self.diagnose: bool = config.get("diagnose", False)
        self.losses: list = []
        self.steps = 0  # optimizer steps
        self.precisions: set[str] = set()
        self.compilations_by_step: list[int] = []  # XLA compilations seen at each step
        self.executions_by_step: list[int] = []  # XLA graph executions seen at each step
        self.tensors_by_step: list[dict] = []  # with diagnose: {name: norm} at each step
        self.seeded_by_script: set[str] = set()
        # in the order the script first calls them (names and order must agree across runs)
        self.modules_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.parameters: dict | None = None
        self.device = ""
        self.done = False
        self.in_scaler_step = False
        self.float64_cost: int | None = None  # multiply-adds in convolutions past the float64 budget
        self.lock = threading.Lock()

    # -- events --------------------------------------------------------------
    def on_backward(self, tensors) -> None:
        _conv_budget["open"] = False  # the first forward pass is what the budget counts
        tensor = tensors[0] if isinstance(tensors, (tuple, list)) else tensors
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return
        if self.steps == 0 and not _live_optimizers:
            # No optimizer has stepped: the script may update its parameters by hand, so a
            # backward pass is a step. Stop before the one past the limit.
            if len(self.losses) >= self.max_steps:
                self._stop()
        unscaled = getattr(tensor, "_xla_migrate_unscaled", tensor)
        loss = unscaled.detach()
        # On the CPU a float costs nothing and survives a kill; on XLA it would force a
        # graph execution at every backward, so the tensor waits for the end of the run.
        self.losses.append(float(loss) if loss.device.type == "cpu" else loss)

    def on_step(self) -> None:
        if self.in_scaler_step or self.done:
            return
        with self.lock:
            self.steps += 1
            if self.steps == 1:
                self._note_param_precision()
                self._note_parameters()
            if self.diagnose:
                self.tensors_by_step.append(_tensor_norms(self._named_parameters()))
            if self.role == "migrated" and _on_xla():
                compilations, executions = _xla_counts()
                self.compilations_by_step.append(compilations)
                self.executions_by_step.append(executions)
            self._write_progress()
            if self.steps >= self.max_steps:
                self._stop()

    def _stop(self) -> None:
        self.finish("step-limit")
        raise StepLimitReached()

    def on_forward(self, module, args) -> None:
        self.modules_seen.setdefault(module)

    def _note_param_precision(self) -> None:
        for obj in list(_live_optimizers):
            for group in obj.param_groups:
                for p in group["params"]:
                    if p.dtype in (torch.float16, torch.bfloat16):
                        self.precisions.add(str(p.dtype).replace("torch.", ""))

    # -- the model -------------------------------------------------------------
    def _roots(self) -> list:
        """The modules the script called that no other called module contains (the models)."""
        seen = list(self.modules_seen)
        inner = {id(sub) for m in seen for sub in m.modules() if sub is not m}
        return sorted((m for m in seen if id(m) not in inner), key=lambda m: type(m).__name__)

    def _named_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """Every (name, parameter) of the models, tied parameters under each of their names."""
        roots = self._roots()
        kinds = [type(root).__name__ for root in roots]
        named = []
        for index, (root, kind) in enumerate(zip(roots, kinds)):
            prefix = ""
            if kinds.count(kind) > 1:  # Layer.0.weight, Layer.1.weight: several models of one class
                prefix = f"{kind}.{kinds[:index].count(kind)}."
            elif len(roots) > 1:
                prefix = f"{kind}."
            named.extend((prefix + name, p) for name, p in root.named_parameters(remove_duplicate=False))
        return named

    def _add_optimizer_owners(self) -> None:
        """Modules whose ``forward`` the script calls directly (``self.forward(x)``) never pass
        the forward hook: take the modules owning the parameters the optimizers hold too."""
        covered = {id(p) for m in self.modules_seen for p in m.parameters()}
        held = [p for opt in _live_optimizers for g in opt.param_groups for p in g["params"] if id(p) not in covered]
        if not held:
            return
        owner = {
            id(p): obj
            for obj in gc.get_objects()
            if isinstance(obj, torch.nn.Module)
            for p in obj.parameters(recurse=False)
        }
        for p in held:  # in the optimizers' order, the same in both runs
            if id(p) in owner:
                self.modules_seen.setdefault(owner[id(p)])

    def _note_parameters(self) -> None:
        """Count the models' parameters, their tied groups, and what the optimizers hold."""
        if self.parameters is not None:
            return
        try:
            self._add_optimizer_owners()
            named = self._named_parameters()
            by_tensor: dict[int, list[str]] = {}
            for name, p in named:
                by_tensor.setdefault(id(p), []).append(name)
            tensors = {id(p): p for _, p in named}
            held = {id(p): p for opt in _live_optimizers for g in opt.param_groups for p in g["params"]}
            trained = {k: p for k, p in tensors.items() if p.requires_grad}
            self.parameters = {
                "models": [type(m).__name__ for m in self._roots()],
                "tensors": len(tensors),
                "numel": sum(p.numel() for p in tensors.values()),
                "tied": sorted(sorted(names) for names in by_tensor.values() if len(names) > 1),
                "optimizers": len(_live_optimizers),
                # held by an optimizer but no part of any model the script runs: it updates
                # tensors the forward pass never reads (built before the model moved)
                "stale_in_optimizer": sum(1 for k in held if k not in tensors),
                # got a gradient but no optimizer holds them (only where optimizers step)
                "not_in_optimizer": sum(1 for k, p in trained.items() if k not in held and p.grad is not None)
                if _live_optimizers
                else 0,
            }
        except Exception as exc:  # a diagnosis must never break the user's run
            self.parameters = {"error": f"could not inspect the parameters: {exc}"}
        _stop_watching_modules()

    # -- the record ------------------------------------------------------------
    def _write_progress(self) -> None:
        """A small file the parent reads if the run dies without a record (and for progress)."""
        progress = {"steps": self.steps, "losses": len(self.losses)}
        if self.compilations_by_step:
            progress["compilations"] = self.compilations_by_step[-1]
        _write_json(os.path.join(self.record_dir, f"progress-{os.getpid()}.json"), progress)

    def finish(self, how: str) -> None:
        if self.done:
            return
        self.done = True
        self._note_parameters()  # a script that never stepped an optimizer: at its end
        if self.parameters and "error" not in self.parameters:
            # every optimizer that stepped (a GAN's second one first steps after step 1)
            self.parameters["optimizers"] = len(_live_optimizers)
        record = {
            "pid": os.getpid(),
            "role": self.role,
            "device": self.device,
            "finished": how,
            "steps": self.steps,
            "precision": _precision(self.precisions),
            "seeded_by_script": sorted(self.seeded_by_script),
            "parameters": self.parameters,
        }
        if self.float64_cost is not None:
            record["float64_cost"] = self.float64_cost
        try:
            if self.role == "migrated" and _on_xla() and how != "float64-cost":
                import torch_xla

                torch_xla.sync()  # what the script does after a step; cached, no new graph
                import torch_xla.core.xla_model as xm

                xm.wait_device_ops()  # executions are counted when they end: the last one too
                metrics = _xla_metrics()
                # A steady loop compiles its graphs in its first iterations (a GAN's second
                # iteration still adds the optimizer state); what is compiled in the second
                # half of the run means shapes or control flow keep changing.
                counts = self.compilations_by_step
                halfway = counts[len(counts) // 2] if len(counts) >= 4 else metrics["compilations"]
                metrics["recompilations"] = metrics["compilations"] - halfway
                metrics["compilations_by_step"] = counts
                metrics["executions_by_step"] = self.executions_by_step
                record.update(metrics)
                record["ordinal"] = _xla_ordinal()
            else:
                record["ordinal"] = int(os.environ.get("RANK", "0") or 0)
            record["losses"] = [_as_float(loss) for loss in self.losses]
            if self.diagnose:
                record["tensors_by_step"] = [
                    dict(zip(names, [_as_float(v) for v in values.cpu()])) for names, values in self.tensors_by_step
                ]
                if _op_records is not None:
                    record["ops_by_step"] = _op_records.by_step()
        except Exception as exc:  # never hide the user's own error behind ours
            record.setdefault("losses", [])
            record["error"] = f"could not read the recorded losses: {exc}"
        _write_json(os.path.join(self.record_dir, f"{self.role}-{os.getpid()}.json"), record)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (ValueError, OSError):  # closed by the script or its launcher before exit
                pass


def _write_json(path: str, data: dict) -> None:
    with open(path + ".tmp", "w") as handle:
        json.dump(data, handle)
    os.replace(path + ".tmp", path)


def _tensor_norms(named) -> tuple[list[str], torch.Tensor]:
    """The norm of every parameter and gradient, stacked in one tensor on their device (one
    transfer a step, at the end of the run)."""
    names, norms, seen = [], [], set()
    with torch.no_grad():
        for name, p in named:
            if id(p) in seen:
                continue
            seen.add(id(p))
            names.append(name)
            norms.append(p.detach().double().norm())
            if p.grad is not None:
                names.append(f"{name}.grad")
                norms.append(p.grad.detach().double().norm())
    return names, torch.stack(norms) if norms else torch.zeros(0, dtype=torch.float64)


_forward_hook = None


def _stop_watching_modules() -> None:
    global _forward_hook
    if _forward_hook is not None:
        _forward_hook.remove()
        _forward_hook = None


def _as_float(tensor) -> float:
    value = tensor if isinstance(tensor, float) else float(tensor.float().cpu())
    return value if math.isfinite(value) else (str(value) if not math.isnan(value) else "nan")


def _precision(seen: set[str]) -> str:
    for name in ("float16", "bfloat16"):
        if name in seen:
            return name
    return "float32"


def _xla_counts() -> tuple[int, int]:
    import torch_xla.debug.metrics as met

    compile_data = met.metric_data("CompileTime")
    # SPMD runs its graphs replicated over the devices and counts them apart
    executions = sum((met.metric_data(name) or (0,))[0] for name in ("ExecuteTime", "ExecuteReplicatedTime"))
    return (compile_data[0] if compile_data else 0), executions


def _xla_metrics() -> dict:
    import torch_xla.debug.metrics as met

    compilations, executions = _xla_counts()
    # .item() shows up as aten::_local_scalar_dense: a host transfer, not a missing lowering.
    fallbacks = {
        name: met.counter_value(name)
        for name in met.counter_names()
        if name.startswith("aten::") and name != "aten::_local_scalar_dense"
    }
    return {
        "compilations": compilations,
        "executions": executions,
        "host_transfers": met.counter_value("aten::_local_scalar_dense") or 0,
        "cpu_fallback_ops": fallbacks,
    }


def _xla_ordinal() -> int:
    try:
        import torch_xla.runtime as xr

        return xr.global_ordinal()
    except Exception:
        return 0


def _on_xla() -> bool:
    """Whether torch_xla runs in this process (a TorchTPU run makes it unimportable: None)."""
    return sys.modules.get("torch_xla") is not None


_live_optimizers: dict = {}  # every optimizer that stepped, in the order of its first step


# -- random numbers drawn from the CPU generator in both runs ------------------------
#
# Plain patches, not the torch function mode: a mode is switched off while its handler
# runs, so the Tensor.normal_ that nn.init.normal_ calls inside would escape it.


def _is_cpu(device) -> bool:
    return device is None or torch.device(device).type == "cpu"


def _factory(original):
    """torch.randn(..., device=d): drawn on the CPU, then moved to d."""

    def aligned(*args, **kwargs):
        device = kwargs.get("device")
        if _is_cpu(device):
            return original(*args, **kwargs)
        requires_grad = kwargs.pop("requires_grad", False)
        drawn = original(*args, **{**kwargs, "device": "cpu"}).to(device)
        return drawn.requires_grad_() if requires_grad else drawn

    return aligned


def _like_factory(original):
    """torch.randn_like(x): drawn on the CPU in x's shape, then moved to x's device."""

    def aligned(like, *args, **kwargs):
        device = kwargs.get("device", like.device)
        if _is_cpu(device):
            return original(like, *args, **kwargs)
        kwargs = {**kwargs, "device": "cpu", "dtype": kwargs.get("dtype", like.dtype)}
        return original(torch.empty(like.shape, dtype=kwargs["dtype"]), *args, **kwargs).to(device)

    return aligned


def _fill(original):
    """tensor.normal_() and kin on a device tensor: drawn on the CPU, then copied in."""

    def aligned(self, *args, **kwargs):
        if _is_cpu(self.device):
            return original(self, *args, **kwargs)
        drawn = original(torch.empty(self.shape, dtype=self.dtype), *args, **kwargs)
        with torch.no_grad():
            return self.copy_(drawn)

    return aligned


def _bernoulli(original):
    """torch.bernoulli(p) as ``uniform < p`` with the uniform drawn on the CPU (any device)."""

    def aligned(probs, *args, **kwargs):
        if args or kwargs or not isinstance(probs, torch.Tensor):
            return original(probs, *args, **kwargs)
        uniform = torch.rand(probs.shape, dtype=torch.float32).to(probs.device)
        return (uniform < probs).to(probs.dtype)

    return aligned


def _dropout(channel_wise: int):
    """Dropout with its mask drawn on the CPU, the same way on every device."""

    def aligned(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        if p == 1:
            return input.mul_(0) if inplace else input.mul(0)
        shape = list(input.shape)
        if channel_wise:
            keep_dims = 2 if input.dim() == channel_wise + 2 else 1  # batched or not
            shape = shape[:keep_dims] + [1] * (len(shape) - keep_dims)
        keep = torch.empty(shape, dtype=torch.float32).bernoulli_(1 - p)
        mask = keep.to(device=input.device, dtype=input.dtype)
        return input.mul_(mask).div_(1 - p) if inplace else input * mask / (1 - p)

    return aligned


def _multinomial(original):
    """torch.multinomial(probs, 1) (and with replacement) as the inverse of the cumulative
    distribution at a uniform drawn on the CPU, the same way on every device and without a
    read to the host: a trainer that samples text between its steps would otherwise draw
    from the CPU generator in one run and the XLA generator in the other, and the dropout
    masks of every later step would differ. Other forms (samples without replacement, a
    generator, ``out=``) are left as they are."""

    def aligned(probs, num_samples, replacement=False, **kwargs):
        if kwargs or not isinstance(probs, torch.Tensor) or (num_samples != 1 and not replacement):
            return original(probs, num_samples, replacement, **kwargs)
        uniform = torch.rand((*probs.shape[:-1], num_samples), dtype=torch.float64).to(probs.device)
        cdf = probs.to(torch.float64).cumsum(-1)
        cdf = cdf / cdf[..., -1:]
        drawn = (cdf.unsqueeze(-2) <= uniform.unsqueeze(-1)).sum(-1)
        return drawn.clamp(max=probs.shape[-1] - 1)

    return aligned


class _LayerwiseRNNs:
    """``torch._VF`` as ``nn.RNN``/``LSTM``/``GRU`` see it: a stack of layers with dropout
    between them runs one layer at a time, with the aligned ``F.dropout`` between layers
    (the fused kernel draws that dropout from its own device's generator). The same
    arithmetic, layer by layer, as the kernel's own loop."""

    def __init__(self, vf) -> None:
        self._vf = vf

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def lstm(self, *args):
        return self._layerwise(self._vf.lstm, args)

    def gru(self, *args):
        return self._layerwise(self._vf.gru, args)

    def rnn_tanh(self, *args):
        return self._layerwise(self._vf.rnn_tanh, args)

    def rnn_relu(self, *args):
        return self._layerwise(self._vf.rnn_relu, args)

    @staticmethod
    def _layerwise(kernel, args):
        # (input, hx, weights, bias, layers, dropout, train, bidirectional, batch_first), or
        # for packed sequences (input, batch_sizes, hx, weights, bias, layers, dropout, train, bidirectional)
        packed = isinstance(args[3], (list, tuple))
        lead, (hx, weights, bias, layers, dropout, train, bidirectional), tail = (
            (args[:2], args[2:9], ()) if packed else (args[:1], args[1:8], args[8:])
        )
        if not (train and dropout > 0 and layers > 1):
            return kernel(*args)
        directions = 2 if bidirectional else 1
        per_layer = len(weights) // layers
        x, *rest = lead
        finals = []
        for layer in range(layers):
            states = slice(layer * directions, (layer + 1) * directions)
            layer_hx = tuple(h[states] for h in hx) if isinstance(hx, (list, tuple)) else hx[states]
            out = kernel(
                x,
                *rest,
                layer_hx,
                weights[layer * per_layer : (layer + 1) * per_layer],
                bias,
                1,
                0.0,
                train,
                bidirectional,
                *tail,
            )
            finals.append(out[1:])
            x = F.dropout(out[0], dropout, True) if layer < layers - 1 else out[0]
        return (x, *(torch.cat(parts) for parts in zip(*finals)))


def _install_rng_alignment() -> None:
    for name in ("randn", "rand", "randint", "randperm", "normal"):
        setattr(torch, name, _factory(getattr(torch, name)))
    for name in ("randn_like", "rand_like", "randint_like"):
        setattr(torch, name, _like_factory(getattr(torch, name)))
    for name in (
        "normal_",
        "uniform_",
        "bernoulli_",
        "random_",
        "exponential_",
        "geometric_",
        "log_normal_",
        "cauchy_",
    ):
        setattr(torch.Tensor, name, _fill(getattr(torch.Tensor, name)))
    torch.bernoulli = _bernoulli(torch.bernoulli)
    torch.multinomial = _multinomial(torch.multinomial)
    torch.Tensor.multinomial = _multinomial(torch.Tensor.multinomial)
    for name, channel_wise in (("dropout", 0), ("dropout1d", 1), ("dropout2d", 2), ("dropout3d", 3)):
        setattr(F, name, _dropout(channel_wise))
    rnn_modules._VF = _LayerwiseRNNs(torch._VF)


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
    """The innermost caller outside torch and this module: the line that called the op."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "torch" or module.startswith("torch.") or module == __name__):
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


# -- float64: the exactness check ----------------------------------------------------------
#
# Both runs do their floating-point work in float64: default dtype float64, every request
# for a lower float dtype (``dtype=torch.float32``, ``.float()``, ``.half()``,
# ``.to(torch.bfloat16)``) made float64, and a lower-precision tensor that meets a float64
# one in an op made float64 first (data read as float32 from NumPy, say). Autocast leaves
# float64 alone, so a float16 GPU run and a bfloat16 XLA run compute the same thing. What
# is left of the difference is the migration's, not rounding's: a correct migration
# agrees to about 1e-12.

LOW_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_TO_DOUBLE = {"float", "half", "bfloat16"}


def _is_low(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in LOW_FLOATS


def _is_double(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype == torch.float64


def _double(value):
    if _is_low(value):
        return value.double()
    if isinstance(value, (list, tuple)) and any(_is_low(v) for v in value):
        return type(value)(v.double() if _is_low(v) else v for v in value)
    return value


def _mixes_doubles(values) -> bool:
    flat = [w for v in values for w in (v if isinstance(v, (list, tuple)) else (v,))]
    return any(_is_double(v) for v in flat) and any(_is_low(v) for v in flat)


# torch's own bookkeeping that must keep its float32 (a GradScaler's scale and inf flags)
_KEEPS_ITS_DTYPES = ("torch.amp.", "torch.cuda.amp.")


def _called_from(prefixes: tuple[str, ...]) -> bool:
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "") in ("torch.overrides", __name__):
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__", "").startswith(prefixes)


# What float64 costs: XLA's CPU backend computes float64 convolutions some 40 times slower
# than float32 ones (measured: the weight gradient of a 64-channel 3x3 convolution on 8x56x56,
# 1.6 s against 0.04 s; eager CPU 4 times), so a large convolutional model would take many
# times its bare runs. The harness sets a budget of multiply-adds in convolutions for the first
# forward pass; past it, the run stops at once (finished "float64-cost") and both run again as
# written (harness.py).
_CONVOLUTIONS = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}
_conv_budget = {"limit": None, "macs": 0, "open": True, "recorder": None}


def _count_convolution(name: str, args, result) -> None:
    if len(args) < 2 or not isinstance(result, torch.Tensor) or not isinstance(args[1], torch.Tensor):
        return
    weight = args[1]
    per_output = weight.shape[1] * math.prod(weight.shape[2:])  # in channels / groups x kernel
    if name.startswith("conv_transpose"):
        macs = args[0].numel() * per_output  # (out channels / groups) x kernel for each input
    else:
        macs = result.numel() * per_output
    _conv_budget["macs"] += macs
    if _conv_budget["macs"] > _conv_budget["limit"]:
        _conv_budget["open"] = False
        recorder = _conv_budget["recorder"]
        recorder.float64_cost = _conv_budget["macs"]
        recorder.finish("float64-cost")
        os._exit(0)


class Float64Mode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _called_from(_KEEPS_ITS_DTYPES):
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in _CONVOLUTIONS and _conv_budget["open"] and _conv_budget["limit"] is not None:
            result = self.__torch_function__(_Uncounted(func), types, args, kwargs)
            _count_convolution(name, args, result)
            return result
        if name in _TO_DOUBLE:
            func = torch.Tensor.double
        elif kwargs.get("dtype") in LOW_FLOATS:
            kwargs = {**kwargs, "dtype": torch.float64}
        if name in ("to", "type"):
            args = tuple(torch.float64 if a in LOW_FLOATS else a for a in args)
        elif _mixes_doubles([*args, *kwargs.values()]):
            # an in-place op writes into its first argument: that one must stay itself
            keep_first = (
                (name.endswith("_") and not name.startswith("__"))
                or name.startswith("__i")
                or name == "__setitem__"
                or "out" in kwargs
            )
            args = (*args[:1], *map(_double, args[1:])) if keep_first else tuple(map(_double, args))
            kwargs = {k: (v if k == "out" else _double(v)) for k, v in kwargs.items()}
        return func(*args, **kwargs)


class _Uncounted:
    """``func`` under another name, so that the convolution count sees each call once."""

    def __init__(self, func) -> None:
        self.func = func
        self.__name__ = "_uncounted"

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)


def _install_float64() -> None:
    torch.set_default_dtype(torch.float64)


# -- a device emulated on the CPU: CUDA (the reference run without a GPU), TorchTPU's "tpu" --
#
# The same machinery for both, by device type: every device of that type, wherever a device
# is given (a name, "cuda:0", a torch.device, a bare index, device= keywords, .to(...)), is
# made the CPU by a torch function mode; the device module (torch.cuda, torch.tpu) answers
# as one device would; Tensor.cuda()/.tpu() and Module.cuda()/.tpu() keep the tensor;
# autocast, GradScaler, torch.load, the process-group backend and DDP's device ids all
# point at the CPU.


def _on_cpu(value, device_type: str):
    """``value`` with a device of ``device_type`` (a name, a torch.device, a bare index) made the CPU."""
    if isinstance(value, str) and (value == device_type or value.startswith(device_type + ":")):
        return "cpu"
    if isinstance(value, torch.device) and value.type == device_type:
        return torch.device("cpu")
    if isinstance(value, int) and not isinstance(value, bool):
        return "cpu"
    return value


_LEGACY_NAMES: dict[str, str] = {}  # "torch.cuda.FloatTensor": "torch.FloatTensor", filled by the shim


def _decuda(func, args, kwargs, device_type: str = "cuda"):
    """Arguments with devices of ``device_type`` replaced by the CPU, or None when there were none."""
    changed = False
    if (
        func is torch.Tensor.type and len(args) > 1 and isinstance(args[1], str) and args[1] in _LEGACY_NAMES
    ):  # x.type("torch.cuda.FloatTensor")
        args = (args[0], _LEGACY_NAMES[args[1]], *args[2:])
        changed = True
    if "device" in kwargs and _on_cpu(kwargs["device"], device_type) is not kwargs["device"]:
        kwargs = {**kwargs, "device": _on_cpu(kwargs["device"], device_type)}
        changed = True
    if func is torch.Tensor.to and len(args) > 1 and isinstance(args[1], (str, torch.device, int)):
        new = _on_cpu(args[1], device_type)
        if new is not args[1]:
            args = (args[0], new, *args[2:])
            changed = True
    return (args, kwargs) if changed else None


class EmulationMode(TorchFunctionMode):
    """Sees every torch call of an emulated run and maps the emulated device to the CPU."""

    device_type = "cuda"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fixed = _decuda(func, args, kwargs, self.device_type)
        if fixed is not None:
            args, kwargs = fixed
        return func(*args, **kwargs)


class TpuEmulationMode(EmulationMode):
    """The migrated run of a TorchTPU migration: the "tpu" device mapped to the CPU."""

    device_type = "tpu"


def _one_pass_batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Batch norm in training with its statistics in one pass, Var = E[x^2] - E[x]^2, as XLA
    expands BatchNormTraining: in float32 that cancels where the mean is large against the
    spread (measured on CPU PJRT: 8x64x32x32 of mean 5 and deviation 3, output and gradients
    5e-6 from float64 against 3e-7 for eager's two-pass kernel; of mean 1000 and deviation 1,
    XLA's output is NaN, eager's right)."""
    dims = [0, *range(2, input.dim())]
    shape = [1, -1] + [1] * (input.dim() - 2)
    mean = input.mean(dims)
    var = (input * input).mean(dims) - mean * mean
    if running_mean is not None:
        count = input.numel() // input.size(1)
        with torch.no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach(), alpha=momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (count / max(count - 1, 1)), alpha=momentum)
    out = (input - mean.reshape(shape)) * torch.rsqrt(var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


_BATCH_NORM_ARGS = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")


class TwinMode(TorchFunctionMode):
    """The twin's arithmetic: batch norm in training with its statistics in one pass, as XLA
    computes them, and 2-d convolutions in the channels-last memory format, so that oneDNN
    sums in another order (at the cost of the reference's own kernels; without oneDNN they
    cost 1.4 times more)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") == "conv2d" and len(args) > 1 and getattr(args[0], "ndim", 0) == 4:
            channels_last = [a.contiguous(memory_format=torch.channels_last) for a in args[:2]]
            return func(*channels_last, *args[2:], **kwargs)
        if func is torch.nn.functional.batch_norm:
            bound = {**dict(zip(_BATCH_NORM_ARGS, args)), **kwargs}
            in_training = bound.get("training") or bound.get("running_mean") is None
            if in_training and bound.get("momentum", 0.1) is not None:  # None: a cumulative average
                return _one_pass_batch_norm(**bound)
        return func(*args, **kwargs)


def _enter_in_every_thread(mode_types: list[type[TorchFunctionMode]]) -> None:
    """Torch function modes are per thread: push the modes in threads the script starts too."""
    for mode_type in mode_types:
        mode_type().__enter__()
    original_run = threading.Thread.run

    def run(self, *args, **kwargs):
        with contextlib.ExitStack() as stack:
            for mode_type in mode_types:
                stack.enter_context(mode_type())
            return original_run(self, *args, **kwargs)

    threading.Thread.run = run


def _returning(value):
    """A new function returning ``value`` (torch.compile refuses one function under two names)."""
    return lambda *args, **kwargs: value


def _for_user_code(real, emulated):
    """``emulated`` for the script's own calls; torch's internals keep seeing no GPU."""

    def query(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "torch" or caller.startswith("torch."):
            return real(*args, **kwargs)
        return emulated

    return query


LEGACY_TYPES = (
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
)


def _cpu_types(float64: bool) -> dict[str, type]:
    """torch.cuda's legacy typed tensors, each as its CPU type (in float64 mode, the float
    ones as torch.DoubleTensor: a request for a lower float dtype like any other)."""
    types_ = {name: getattr(torch, name) for name in LEGACY_TYPES}
    if float64:
        types_.update(FloatTensor=torch.DoubleTensor, HalfTensor=torch.DoubleTensor, BFloat16Tensor=torch.DoubleTensor)
    return types_


class _Event:
    """torch.cuda.Event on the CPU: recorded at once, timed by the wall clock."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        self._at = None

    def record(self, stream=None):
        import time

        self._at = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        if self._at is None or end_event._at is None:
            return 0.0
        return (end_event._at - self._at) * 1000.0


class _Stream:
    """torch.cuda.Stream on the CPU: everything runs in order on the one CPU stream."""

    cuda_stream = 0

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("cpu")
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or _Event()
        event.record(self)
        return event

    def synchronize(self):
        pass

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _StreamContext:
    def __init__(self, stream=None):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def _install_device_shim(device_type: str, module, backends: tuple[str, ...]) -> None:
    """What every emulated device gets: ``module`` (torch.cuda, torch.tpu) with CPU streams and
    events, ``Tensor.<device_type>()`` and ``Module.<device_type>()`` keeping the tensor,
    autocast and GradScaler on the CPU, ``torch.load`` onto the CPU, ``backends`` of
    init_process_group as gloo, DDP without device ids, and ``torch.accelerator`` answering
    the script as one device would."""
    # streams and events (a data loader that prefetches on a side stream, timm's style)
    default_stream = _Stream()
    module.Stream = _Stream
    module.Event = _Event
    module.StreamContext = _StreamContext
    module.stream = _StreamContext
    module.current_stream = lambda device=None: default_stream
    module.default_stream = lambda device=None: default_stream
    module.set_stream = _returning(None)
    torch.Tensor.record_stream = lambda self, stream: None
    setattr(torch.Tensor, device_type, lambda self, *args, **kwargs: self)
    setattr(torch.nn.Module, device_type, lambda self, *args, **kwargs: self)
    torch.Tensor.pin_memory = lambda self, *args, **kwargs: self
    if hasattr(torch, "accelerator"):
        accelerator = torch.accelerator
        if device_type == "cuda":  # a CPU build of torch has no accelerator: one for everybody
            accelerator.is_available = _returning(True)
            accelerator.current_accelerator = _returning(torch.device("cpu"))
        else:  # the renamed privateuse1 device is the accelerator already; torch's internals see none
            accelerator.is_available = _for_user_code(accelerator.is_available, True)
        accelerator.device_count = _returning(1)
        accelerator.set_device_index = _returning(None)
        accelerator.current_device_index = _returning(0)
        accelerator.synchronize = _returning(None)

    emulated = device_type
    autocast_init = torch.amp.autocast_mode.autocast.__init__

    def autocast(self, device_type=emulated, *args, **kwargs):
        autocast_init(self, "cpu" if device_type == emulated else device_type, *args, **kwargs)

    torch.amp.autocast_mode.autocast.__init__ = autocast

    scaler_init = torch.amp.GradScaler.__init__

    def grad_scaler(self, device=emulated, *args, **kwargs):
        scaler_init(self, "cpu" if device == emulated else device, *args, **kwargs)

    torch.amp.GradScaler.__init__ = grad_scaler

    load = torch.load

    def load_on_cpu(*args, map_location=None, **kwargs):
        if callable(map_location):
            map_location = "cpu"
        return load(*args, map_location=_on_cpu(map_location, emulated), **kwargs)

    torch.load = load_on_cpu

    import torch.distributed as dist

    init_process_group = dist.init_process_group

    def gloo_instead(backend=None, *args, **kwargs):
        if isinstance(backend, str) and any(name in backend for name in backends):
            backend = "gloo"
        # this child's own port (harness.RENDEZVOUS_PORT): the other run's group may be meeting
        # at the port the script names, side by side on this machine
        method = kwargs.get("init_method") or (args[0] if args else None)
        if (method is None or str(method).startswith("env://")) and "XLA_MIGRATE_VERIFY_PORT" in os.environ:
            os.environ["MASTER_PORT"] = os.environ["XLA_MIGRATE_VERIFY_PORT"]
        return init_process_group(backend, *args, **kwargs)

    dist.init_process_group = gloo_instead

    # DDP's device ids name devices; for a module on the CPU it takes none (and raises otherwise).
    ddp = torch.nn.parallel.DistributedDataParallel
    ddp_init = ddp.__init__

    def ddp_on_cpu(self, module, device_ids=None, output_device=None, *args, **kwargs):
        ddp_init(self, module, None, None, *args, **kwargs)

    ddp.__init__ = ddp_on_cpu


def _install_cuda_shim(float64: bool = False) -> None:
    cuda = torch.cuda
    _install_device_shim("cuda", cuda, ("nccl",))
    # legacy typed tensors: torch.cuda.FloatTensor(batch, 1), x.type(torch.cuda.LongTensor), ...
    cpu_types = _cpu_types(float64)
    for name, cpu_type in cpu_types.items():
        setattr(cuda, name, cpu_type)
    set_default_tensor_type = torch.set_default_tensor_type

    def default_tensor_type_on_cpu(t):
        if isinstance(t, str) and t.startswith("torch.cuda."):
            t = cpu_types.get(t.removeprefix("torch.cuda."), t)
        return set_default_tensor_type(t)

    torch.set_default_tensor_type = default_tensor_type_on_cpu
    _LEGACY_NAMES.update({f"torch.cuda.{name}": f"torch.{t.__name__}" for name, t in cpu_types.items()})
    for name in (
        "set_device",
        "synchronize",
        "empty_cache",
        "ipc_collect",
        "init",
        "manual_seed",
        "manual_seed_all",
        "reset_peak_memory_stats",
        "reset_max_memory_allocated",
        "reset_accumulated_memory_stats",
    ):
        setattr(cuda, name, _returning(None))
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(cuda, name, _returning(0))
    cuda.is_available = _for_user_code(cuda.is_available, True)
    cuda.device_count = _for_user_code(cuda.device_count, 1)
    cuda.is_current_stream_capturing = _returning(False)
    cuda.current_device = _returning(0)
    cuda.is_bf16_supported = _returning(True)
    cuda.get_device_name = _returning("cpu (cuda emulated)")
    cuda.get_device_properties = _returning(
        types.SimpleNamespace(name="cpu (cuda emulated)", total_memory=0, major=0, minor=0, multi_processor_count=1)
    )
    cuda.get_device_capability = _returning((0, 0))
    cuda.mem_get_info = _returning((0, 0))
    autocast_init = torch.amp.autocast_mode.autocast.__init__  # the shim's: "cpu" stays "cpu"
    torch.cuda.amp.autocast.__init__ = lambda self, enabled=True, dtype=torch.float16, cache_enabled=True: (
        autocast_init(self, "cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
    )
    scaler_init = torch.amp.GradScaler.__init__
    torch.cuda.amp.GradScaler.__init__ = lambda self, *args, **kwargs: scaler_init(self, "cpu", *args, **kwargs)


# -- TorchTPU emulated on the CPU (the migrated run of a --runtime torch-tpu migration) -----
#
# torch_tpu renames PyTorch's privateuse1 device to "tpu" and installs ``torch.tpu``, whose
# names are declared in one table (migrate_xla/tpu_api.py, generated from its wheel; the
# harness passes it in the config, as this module imports nothing of xla-migrate). Here
# the same rename makes torch.device("tpu") a device (of type "tpu"), the emulation maps it
# to the CPU as the reference's does CUDA, and ``torch.tpu`` is built from the table: each
# name with its CPU meaning, or, where TorchTPU's meaning cannot be had on the CPU (its eager
# and precision modes, its own kernels and optimizers), raising a clear error when used.
# torch_xla is not importable: it does not exist beside TorchTPU (torch >= 2.11).

TPU_LABEL = "cpu (tpu emulated)"


class _Unemulated:
    """A name of TorchTPU's table that the CPU emulation cannot give a meaning to."""

    def __init__(self, qualname: str) -> None:
        self._qualname = qualname

    def _refuse(self):
        raise NotImplementedError(
            f"{self._qualname} is TorchTPU's own: verify's CPU emulation of the tpu device cannot run it "
            "(its meaning needs TorchTPU on a TPU)"
        )

    def __call__(self, *args, **kwargs):
        self._refuse()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._refuse()

    def __repr__(self) -> str:
        return f"<{self._qualname}: not emulated>"


class _DeviceContext:
    """torch.tpu.device(i) / device_of(tensor): the one device is always current."""

    def __init__(self, device=None) -> None:
        self.idx = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _tpu_module(tpu_api: dict) -> types.ModuleType:
    device_type = tpu_api["device"]
    module = types.ModuleType(f"torch.{device_type}")
    module.__doc__ = "TorchTPU's torch.tpu, emulated on the CPU by xla-migrate verify."
    # The device's own generator: seeding it (torch.tpu.manual_seed) leaves the CPU generator,
    # which random numbers drawn "on the device" come from in the emulation, as it is: as
    # torch.cuda.manual_seed leaves it in the reference.
    generator = torch.Generator()
    user_available = _for_user_code(_returning(False), True)
    emulated = {
        "synchronize": _returning(None),
        "device": _DeviceContext,
        "device_of": _DeviceContext,
        "device_count": _for_user_code(_returning(0), 1),
        "current_device": _returning(0),
        "set_device": _returning(None),
        "is_available": user_available,
        "is_initialized": _returning(True),
        "get_device_name": _returning(TPU_LABEL),
        "get_device_properties": _returning(types.SimpleNamespace(name=TPU_LABEL, total_memory=0, type=device_type)),
        "manual_seed": lambda seed: generator.manual_seed(int(seed)) and None,
        "manual_seed_all": lambda seed: generator.manual_seed(int(seed)) and None,
        "initial_seed": lambda: generator.initial_seed(),
        "get_rng_state": lambda device=None: generator.get_state(),
        "set_rng_state": lambda state, device=None: generator.set_state(state),
        "default_generators": (generator,),
        "get_amp_supported_dtype": lambda: [torch.bfloat16, torch.float16],
        # the chips' addresses and topology for the workers a launcher starts: none on the CPU,
        # where the workers meet through MASTER_ADDR / MASTER_PORT (gloo)
        "distributed.set_tpu_launch_env": _returning(None),
    }
    # what torch.manual_seed looks for to seed a privateuse1 device as well (torch_tpu has it)
    module._is_in_bad_fork = _returning(False)
    public = tpu_api["public_modules"]
    for name in sorted(public.get(module.__name__, ())):
        setattr(module, name, emulated.get(name, _Unemulated(f"{module.__name__}.{name}")))
    for qualname, exported in sorted(public.items()):
        parent, _, last = qualname.rpartition(".")
        if parent != module.__name__:
            continue
        sub = types.ModuleType(qualname)
        for name in sorted(exported):
            setattr(sub, name, emulated.get(f"{last}.{name}", _Unemulated(f"{qualname}.{name}")))
        setattr(module, last, sub)
        sys.modules[qualname] = sub
    return module


def _install_tpu_shim(tpu_api: dict) -> None:
    """``tpu_api``: migrate_xla/tpu_api.py's facts, as the harness passes them (harness.tpu_facts):
    the device name, the process-group and compile backends, the public modules and their names."""
    device_type = tpu_api["device"]
    sys.modules["torch_xla"] = None  # import torch_xla: ModuleNotFoundError, as beside TorchTPU
    torch.utils.rename_privateuse1_backend(device_type)  # torch.device("tpu"), as torch_tpu does
    module = _tpu_module(tpu_api)
    torch._register_device_module(device_type, module)  # torch.tpu, sys.modules["torch.tpu"]
    # torch's internals that pick a device for their own tensors (a barrier's) ask the C++
    # accelerator, which the renamed device has none of (no PrivateUse1 hooks): the CPU it is
    torch._C._get_accelerator = _returning(torch.device("cpu"))
    _install_device_shim(device_type, module, tuple(tpu_api["process_group_backends"]))
    # torch_tpu's generated methods: Tensor.tpu(), Module.tpu() (by the shim), Tensor.is_tpu
    torch.Tensor.is_tpu = property(lambda self: True)  # every tensor is on the one emulated device
    torch.nn.utils.rnn.PackedSequence.tpu = lambda self, *args, **kwargs: self
    # torch.compile(backend="tpu"): TorchTPU's compiler is for a TPU; its result must be the
    # eager result, so the emulation runs the model eagerly
    compile_ = torch.compile

    def compile_on_cpu(model=None, *args, backend="inductor", **kwargs):
        if backend != tpu_api["compile_backend"]:
            return compile_(model, *args, backend=backend, **kwargs)
        return model if model is not None else (lambda fn: fn)

    torch.compile = compile_on_cpu


# -- hooks -------------------------------------------------------------------------------


def _install_hooks(recorder: Recorder) -> None:
    backward = torch.autograd.backward

    def recording_backward(tensors, *args, **kwargs):
        recorder.on_backward(tensors)
        return backward(tensors, *args, **kwargs)

    torch.autograd.backward = recording_backward

    def after_step(optimizer, args, kwargs):
        _live_optimizers.setdefault(optimizer)
        recorder.on_step()

    optim_impl.register_optimizer_step_post_hook(after_step)

    scale = torch.amp.GradScaler.scale

    def recording_scale(self, outputs):
        scaled = scale(self, outputs)
        if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor):
            scaled._xla_migrate_unscaled = outputs
        return scaled

    torch.amp.GradScaler.scale = recording_scale

    scaler_step = torch.amp.GradScaler.step

    def counting_scaler_step(self, optimizer, *args, **kwargs):
        # One step whether or not the scaler skips it (float16 overflow skips early steps).
        recorder.in_scaler_step = True
        try:
            result = scaler_step(self, optimizer, *args, **kwargs)
        finally:
            recorder.in_scaler_step = False
        _live_optimizers.setdefault(optimizer)
        recorder.on_step()
        return result

    torch.amp.GradScaler.step = counting_scaler_step

    autocast_enter = torch.amp.autocast_mode.autocast.__enter__

    def noting_autocast(self):
        if getattr(self, "_enabled", False):
            recorder.precisions.add(str(self.fast_dtype).replace("torch.", ""))
        return autocast_enter(self)

    torch.amp.autocast_mode.autocast.__enter__ = noting_autocast
    atexit.register(recorder.finish, "exit")


def _device_label(recorder: Recorder, emulated: str | None) -> str:
    if emulated is not None:
        return f"cpu ({emulated} emulated)"
    if recorder.role == "migrated":
        kind = os.environ.get("PJRT_DEVICE", "CPU")
        return f"xla ({kind})"
    return f"cuda ({torch.cuda.get_device_name()})"


def _emulated_device(config: dict) -> str | None:
    """The device this run emulates on the CPU: CUDA for the reference without a GPU, "tpu"
    for the migrated run of a TorchTPU migration (config "emulate"); None: none."""
    if config["role"] == "migrated":
        return config.get("emulate")
    return "cuda" if not torch.cuda.is_available() else None


def _seed_everything(recorder: Recorder, seed: int) -> None:
    """Seed torch, Python's random and NumPy alike in both runs, then note the script's own seeding.

    Without it each child draws its seeds from the OS, and an unseeded script does not
    even agree with itself from one run to the next. A script that seeds still wins: its
    own call comes later.
    """
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        numpy.random.seed(seed)
        default_rng = numpy.random.default_rng

        def seeded_default_rng(seed=None):
            # an unseeded Generator takes the OS's entropy: draw its seed from the seeded state
            return default_rng(numpy.random.randint(2**31) if seed is None else seed)

        numpy.random.default_rng = seeded_default_rng

    def noting(owner, name, what):
        original = getattr(owner, name)

        def seed_call(*args, **kwargs):
            recorder.seeded_by_script.add(what)
            return original(*args, **kwargs)

        setattr(owner, name, seed_call)

    noting(torch, "manual_seed", "torch")
    for device_module in (torch.cuda, getattr(torch, "tpu", None)):  # torch.tpu: where emulated
        if device_module is not None:
            noting(device_module, "manual_seed", "torch")
            noting(device_module, "manual_seed_all", "torch")
    noting(random, "seed", "random")
    if numpy is not None:
        noting(numpy.random, "seed", "numpy")


def _write_record_on_sigterm(recorder: Recorder) -> None:
    """The harness's timeout sends SIGTERM first: write what was recorded, then die."""

    def on_sigterm(signum, frame):
        recorder.finish("timeout")
        os._exit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # not the main thread
        pass


def install() -> None:
    global _forward_hook, _op_records
    config = json.loads(os.environ[ENV])
    recorder = Recorder(config)
    emulated = _emulated_device(config)
    recorder.device = _device_label(recorder, emulated)
    if emulated == "cuda":
        _install_cuda_shim(float64=bool(config.get("float64")))
    elif emulated is not None:
        _install_tpu_shim(config["tpu_api"])
    if config.get("seed") is not None:
        _seed_everything(recorder, config["seed"])
    _install_hooks(recorder)
    _forward_hook = torch.nn.modules.module.register_module_forward_pre_hook(recorder.on_forward)
    _write_record_on_sigterm(recorder)
    if config.get("align_rng", True):
        _install_rng_alignment()
    modes = [EmulationMode if emulated == "cuda" else TpuEmulationMode] if emulated else []
    if config.get("float64"):
        _install_float64()
        _conv_budget.update(limit=config.get("float64_conv_budget"), recorder=recorder)
        modes.append(Float64Mode)
    if config.get("perturb"):
        # the twin of the reference: the same float32 training rounded as XLA rounds it, batch
        # norm statistics in one pass and convolutions by other kernels, to measure how far
        # rounding alone carries it (compare.py)
        modes.append(TwinMode)
    if config.get("diagnose"):
        _op_records = _OpRecords(recorder)
        modes.append(OpRecorder)  # the last one entered sees each call first, as the script made it
    if modes:
        _enter_in_every_thread(modes)
