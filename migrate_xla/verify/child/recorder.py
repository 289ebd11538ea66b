"""The record of one process: the loss at every ``backward()``, the optimizer steps (and
the stop after ``steps`` of them), the precision, the models' parameters, with ``diagnose``
the norm of every parameter and gradient at every step; written as ``<role>-<pid>.json``
at the end (a progress file at every step)."""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import warnings
import weakref

import torch

from .float64 import _conv_budget
from .shared import _as_float, _live_optimizers
from .xla_metrics import _on_xla, _xla_counts, _xla_metrics, _xla_ordinal

# True while Dynamo traces (torch.compile; a constant in the graph), False when run (torch < 2.3: always)
_is_compiling = getattr(torch.compiler, "is_compiling", lambda: False)


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
        self.float64_cost: int | None = None  # convolution multiply-adds (products at 1/12) past the float64 budget
        self.op_records = None  # with diagnose: the op_records._OpRecords that OpRecorder fills
        # each torch.compile call: the user's file and line, the backend, how it ran (compiled.py)
        self.compiled: list[dict] = []
        self.keep_watching = False  # a compiled model: removing the forward hook would recompile it
        self.lock = threading.Lock()
        self.tpu_capture = None  # the TPU report's capture of one step (tpu_capture.py), in the XLA run

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
        if self.tpu_capture is not None and self.steps == 0 and not _live_optimizers and _on_xla():
            self.tpu_capture.on_step(len(self.losses), self.compiled)  # updated by hand: a backward pass is a step

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
                import torch_xla.core.xla_model as xm

                # executions are counted when they end, and run asynchronously: on loaded cores the
                # previous step's could still be running (PyTorch's 2-D example at 8 devices read
                # no execution between its steps, a false "steps not cut")
                xm.wait_device_ops()
                compilations, executions = _xla_counts()
                self.compilations_by_step.append(compilations)
                self.executions_by_step.append(executions)
                if self.tpu_capture is not None:
                    self.tpu_capture.on_step(self.steps, self.compiled)
            self._write_progress()
            if self.steps >= self.max_steps:
                self._stop()

    def _stop(self) -> None:
        self.finish("step-limit")
        raise StepLimitReached()

    def on_forward(self, module, args) -> None:
        # Dynamo traces this hook at every module call of a compiled region: there it does
        # nothing (a dict of weak references to modules cannot be traced; the region's
        # wrapper, called eagerly, is noted as the module it wraps)
        if _is_compiling():
            return
        if _is_compiled(module):
            module = module._orig_mod
        elif _is_compilers_graph(module):
            return
        self.modules_seen.setdefault(module)

    def _note_param_precision(self) -> None:
        for obj in list(_live_optimizers):
            for group in obj.param_groups:
                for p in group["params"]:
                    if p.dtype in (torch.float16, torch.bfloat16):
                        self.precisions.add(str(p.dtype).replace("torch.", ""))
        for module in list(self.modules_seen):
            dtype = _sharded_param_dtype(module)
            if dtype in (torch.float16, torch.bfloat16):
                self.precisions.add(str(dtype).replace("torch.", ""))

    # -- the model -------------------------------------------------------------
    def _roots(self) -> list:
        """The modules the script called that no other called module contains (the models), those
        that train where any does: a copy of the model traced on the CPU to log its graph
        (XLA903's add_graph) is called, but neither an optimizer holds it nor gets it gradients."""
        seen = list(self.modules_seen)
        inner = {id(sub) for m in seen for sub in m.modules() if sub is not m}
        models = [m for m in seen if id(m) not in inner]
        held = {id(p) for opt in _live_optimizers for group in opt.param_groups for p in group["params"]}
        training = [m for m in models if any(id(p) in held or p.grad is not None for p in m.parameters())]
        return sorted(training or models, key=lambda m: type(m).__name__)

    def _named_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """Every (name, parameter) of the models, tied parameters under each of their names."""
        self._add_optimizer_owners()
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
        the forward hook, nor does a model built after the hook was removed (at the first step:
        a run that resumes from a checkpoint into a new model): take the modules owning the
        parameters the optimizers hold too."""
        covered = {id(p) for m in self.modules_seen for p in m.parameters()}
        held = [p for opt in _live_optimizers for g in opt.param_groups for p in g["params"] if id(p) not in covered]
        if not held:
            return
        with warnings.catch_warnings():  # isinstance on torch.distributed.reduce_op warns it is deprecated
            warnings.simplefilter("ignore")
            modules = [
                obj
                for obj in gc.get_objects()
                if isinstance(obj, torch.nn.Module) and not _is_compiled(obj) and not _is_compilers_graph(obj)
            ]
        if not covered or any(site["ran"] == "compiled" for site in self.compiled):
            # Models called only inside a compiled function (a training step compiled whole)
            # never pass the hook eagerly: the outermost modules holding the parameters, as the
            # reference's hook sees them where it runs that function eagerly; so for a model
            # none of whose modules was seen
            held_ids = {id(p) for p in held}
            holding = [m for m in modules if any(id(p) in held_ids for p in m.parameters())]
            inner = {id(sub) for m in holding for sub in m.modules() if sub is not m}
            owner = {id(p): m for m in holding if id(m) not in inner for p in m.parameters()}
        else:
            owner = {id(p): obj for obj in modules for p in obj.parameters(recurse=False)}
        for p in held:  # in the optimizers' order, the same in both runs
            if id(p) in owner:
                self.modules_seen.setdefault(owner[id(p)])

    def _note_parameters(self) -> None:
        """Count the models' parameters, their tied groups, and what the optimizers hold."""
        if self.parameters is not None:
            return
        try:
            named = self._named_parameters()
            by_tensor: dict[int, list[str]] = {}
            for name, p in named:
                by_tensor.setdefault(id(p), []).append(name)
            tensors = {id(p): p for _, p in named}
            held = {id(p): p for opt in _live_optimizers for g in opt.param_groups for p in g["params"]}
            trained = {k: p for k, p in tensors.items() if p.requires_grad}
            self.parameters = {
                "models": [type(m).__name__ for m in self._roots()],
                "tensors": sum(_held(p)[0] for p in tensors.values()),
                "numel": sum(_held(p)[1] for p in tensors.values()),
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
        if not self.keep_watching:
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
        if self.compiled:
            record["compiled"] = self.compiled
        if self.float64_cost is not None:
            record["float64_cost"] = self.float64_cost
        try:
            if self.role == "migrated" and _on_xla() and how != "float64-cost":
                import torch_xla

                compiled_by_script, _ = _xla_counts()
                torch_xla.sync()  # what the script does after a step: cached, no new graph, unless
                import torch_xla.core.xla_model as xm

                xm.wait_device_ops()  # executions are counted when they end: the last one too
                metrics = _xla_metrics()
                # ... the script cuts its steps elsewhere: a Trainer zeroes the gradients before its
                # sync, so the graph stopped at the step's end holds them and is new. That graph
                # is verify's, not the script's: neither a compilation nor a recompilation of it.
                metrics["stop_compilations"] = metrics["compilations"] - compiled_by_script
                metrics["compilations"] = compiled_by_script
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
                if self.tpu_capture is not None:
                    record["tpu_capture"] = self.tpu_capture.finish()
            else:
                record["ordinal"] = int(os.environ.get("RANK", "0") or 0)
            record["losses"] = [_as_float(loss) for loss in self.losses]
            if self.diagnose:
                record["tensors_by_step"] = [
                    dict(zip(names, [_as_float(v) for v in values.cpu()])) for names, values in self.tensors_by_step
                ]
                if self.op_records is not None:
                    record["ops_by_step"] = self.op_records.by_step()
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


def _watch_modules(recorder: Recorder) -> None:
    """Note the modules the script calls (Recorder.on_forward), until their parameters are noted."""
    global _forward_hook
    _forward_hook = torch.nn.modules.module.register_module_forward_pre_hook(recorder.on_forward)


def _stop_watching_modules() -> None:
    global _forward_hook
    if _forward_hook is not None:
        _forward_hook.remove()
        _forward_hook = None


def _is_compiled(module) -> bool:
    """Whether ``module`` is torch.compile's wrapper (OptimizedModule) of another."""
    return type(module).__name__ == "OptimizedModule" and "_orig_mod" in module._modules


def _is_compilers_graph(module) -> bool:
    """Whether ``module`` is a graph a compiler runs: an fx GraphModule of Dynamo's (its meta
    says so; it may hold the parameters a compiled function reads through a global), or one
    holding no parameters (a backend's: they come in as its inputs); one the script traced
    holds its own."""
    if not isinstance(module, torch.fx.GraphModule):
        return False
    return "dynamo_compile_id" in getattr(module, "meta", {}) or next(module.parameters(), None) is None


def _held(p) -> tuple[int, int]:
    """The parameters and elements a parameter stands for: FSDP v1's FlatParameter holds a
    module's parameters flattened into one (``use_orig_params=False``, padding aside)."""
    numels = getattr(p, "_numels", None)
    if isinstance(numels, tuple):
        return len(numels), sum(numels)
    return 1, p.numel()


def _sharded_param_dtype(module):
    """The dtype FSDP runs a module's forward in (its mixed precision's ``param_dtype``), or None:
    FSDP v1 keeps its policy as ``mixed_precision``, FSDP2 in its state's ``_mp_policy``."""
    try:
        policy = getattr(module, "mixed_precision", None)
        if policy is None and hasattr(module, "_get_fsdp_state"):
            policy = getattr(module._get_fsdp_state(), "_mp_policy", None)
        return getattr(policy, "param_dtype", None)
    except Exception:  # a diagnosis must never break the user's run
        return None


def _precision(seen: set[str]) -> str:
    for name in ("float16", "bfloat16"):
        if name in seen:
            return name
    return "float32"
