"""``torch.compile`` under verify: what each run makes of a compiled model or function, and
the instrumentation kept out of the graphs Dynamo traces.

- The reference (and its twin) run compiled code eagerly. Inductor's CPU code is not what
  the GPU runs, and eager is the meaning torch.compile promises to keep; the instrumentation
  (the CUDA emulation, float64 mode, aligned random numbers, with ``diagnose`` every op)
  sees every call. The model keeps torch.compile's wrapper (``_orig_mod``, its state_dict
  keys), its calls run with Dynamo disabled.
- The migrated run of a PyTorch/XLA migration compiles for real: ``backend="openxla"``
  (XLA810's fix) hands Dynamo's graphs to XLA; a backend that cannot compile for XLA
  (inductor, where XLA810's fix did not apply: --ignore, noqa) fails as it fails without verify. The
  instrumentation is made traceable: the forward hook is a no-op while Dynamo traces
  (recorder.on_forward), float64 mode reads no frames then (float64._called_from), and what
  must run at every call, eagerly, is kept out of the graphs (``torch._dynamo.disable``):
  the recorder's events (hooks._keep_out_of_graphs), float64 mode's count of convolutions
  and the aligned random draws, so a dropout mask is drawn on the CPU at each call, as in
  the reference, not once in a graph (a graph break at each draw; ``fullgraph=True`` is
  relaxed for it). With ``diagnose``
  (every op recorded) the migrated run runs compiled code eagerly too.
- The migrated run of a TorchTPU migration (the "tpu" device emulated on the CPU) runs
  ``backend="tpu"`` (and the other eager backends) eagerly: TorchTPU's compiler is for a
  TPU, its result must be the eager result. Inductor (where XLA810's fix did not apply) generates GPU
  or CPU code, not TPU code: it is refused with an error that names XLA810.

Each ``torch.compile`` call is noted in the record (``compiled``: the user's file and line,
the backend, how it ran), so the report says what ran eagerly.
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING

import torch

from .shared import _is_ours

if TYPE_CHECKING:
    from .recorder import Recorder

# backends that compile for NVIDIA GPUs or the CPU only (XLA810's INDUCTOR_ONLY and the default)
_GPU_BACKENDS = ("inductor", "cudagraphs")
# backends whose result is the eager result by definition
_EAGER_BACKENDS = ("eager", "aot_eager")


def _backend_name(backend) -> str:
    if isinstance(backend, str):
        return backend
    return getattr(backend, "__name__", None) or type(backend).__name__


def _call_site() -> dict:
    """The user's line that called torch.compile (Module.compile's caller, say)."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "torch" or module.startswith("torch.") or _is_ours(module)):
            return {"file": frame.f_code.co_filename, "line": frame.f_lineno}
        frame = frame.f_back
    return {}


def _eager(model):
    """``model`` run eagerly: a module keeps torch.compile's wrapper (OptimizedModule, whose
    calls run with Dynamo disabled), a function is itself, as torch.compile(disable=True)."""
    if isinstance(model, torch.nn.Module):
        try:
            from torch._dynamo.eval_frame import DisableContext, OptimizedModule

            return OptimizedModule(model, DisableContext())
        except Exception:  # another torch's internals: the module itself
            return model
    return model


REFERENCE_WHY = "inductor's CPU code is not what a GPU runs; torch.compile keeps the eager result"
DIAGNOSE_WHY = "--diagnose records every operation"
TPU_WHY = "TorchTPU's compiler needs a TPU; torch.compile keeps the eager result"


class UnemulatedCompile(NotImplementedError):
    """torch.compile with a GPU backend in the TorchTPU emulation (where XLA810's fix did not apply)."""


def _install_compile(recorder: Recorder, config: dict) -> None:
    """``torch.compile`` as this run makes it (module docstring)."""
    compile_ = torch.compile
    if config["role"] != "migrated":
        how = "eager"
    elif config.get("emulate"):
        how = "tpu"
    elif config.get("diagnose"):
        how = "eager"
    else:
        how = "compile"
    tpu_backend = (config.get("tpu_api") or {}).get("compile_backend", "tpu")
    align_rng = config.get("align_rng", True)
    prepared = []

    def verify_compile(model=None, *, backend="inductor", fullgraph=False, disable=False, **kwargs):
        if model is None:  # @torch.compile(...) with arguments: the decorator
            return lambda fn: verify_compile(fn, backend=backend, fullgraph=fullgraph, disable=disable, **kwargs)
        name = _backend_name(backend)
        site = {**_call_site(), "backend": name}
        # the hook noting modules makes OptimizedModule warn that it fires for the wrapper too:
        # the recorder counts the wrapper as the module it wraps
        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        if disable:
            return compile_(model, backend=backend, fullgraph=fullgraph, disable=disable, **kwargs)
        why = None
        if how == "eager":
            ran, why = "eagerly", REFERENCE_WHY if config["role"] != "migrated" else DIAGNOSE_WHY
        elif how == "tpu":
            if name in _GPU_BACKENDS:
                _note(recorder, {**site, "ran": "refused"})
                raise UnemulatedCompile(
                    f"torch.compile with backend {name!r} compiles GPU (Triton) or CPU code, not TPU code: "
                    f'TorchTPU compiles with backend="{tpu_backend}" (XLA810\'s fix, applied unless --ignore or noqa '
                    "keeps it off), or drop torch.compile"
                )
            ran = "eagerly" if name in (tpu_backend, *_EAGER_BACKENDS) else "compiled"
            why = TPU_WHY if name == tpu_backend else f"the {name} backend's result is the eager result"
        else:
            ran = "compiled"
        if ran == "eagerly":
            _note(recorder, {**site, "ran": ran, "why": why})
            return _eager(model)
        if not prepared:
            _keep_instrumentation_out_of_graphs(recorder, align_rng)
            prepared.append(True)
        if fullgraph and align_rng:
            site["fullgraph"] = "relaxed: random draws break the graph"
            fullgraph = False
        if align_rng:
            site["why"] = "Dynamo; random draws run eagerly, outside its graphs"
        _note(recorder, {**site, "ran": ran})
        return compile_(model, backend=backend, fullgraph=fullgraph, **kwargs)

    verify_compile.__doc__ = compile_.__doc__
    torch.compile = verify_compile


def _note(recorder: Recorder, site: dict) -> None:
    if site not in recorder.compiled and len(recorder.compiled) < 20:
        recorder.compiled.append(site)


def _keep_instrumentation_out_of_graphs(recorder: Recorder, align_rng: bool) -> None:
    """Before Dynamo first traces: what must run eagerly at every call is kept out of its graphs."""
    from . import float64, rng
    from .hooks import _keep_out_of_graphs

    _keep_out_of_graphs(recorder)
    _modes_run_as_they_are()
    # float64 mode's budget counts the convolutions and matrix products of the first forward
    # pass, and may end the run: eagerly, at each (graphs compiled then break at each; once the
    # budget is closed, Dynamo compiles them again whole)
    float64._count_cost = torch._dynamo.disable(float64._count_cost)
    recorder.keep_watching = True  # removing the forward hook would recompile every graph
    if not align_rng:
        return
    import torch.nn.functional as F

    disable = torch._dynamo.disable
    for owner in (torch, torch.Tensor, F):
        for name, value in list(vars(owner).items()):
            if name == "scaled_dot_product_attention":
                continue  # traced as it is: its mask is drawn by the aligned F.dropout, kept out here
            if callable(value) and getattr(value, "__module__", None) == rng.__name__:
                setattr(owner, name, _drawing_outside_graphs(disable(value)) if owner is F else disable(value))


def _modes_run_as_they_are() -> None:
    """Where Dynamo traces, it inlines the modes' ``__torch_function__`` (their work goes into
    the graph). Where a compiled region runs ops eagerly (between its graphs), each op calls
    ``__torch_function__`` as a frame of its own: that frame, and what it calls, runs as it is
    (compiled, it recompiled for every op and met Dynamo's recompile limit)."""
    try:  # Dynamo's own switch (what torch._dynamo.skip_code sets, here for the calls below too)
        from torch._dynamo.eval_frame import set_code_exec_strategy
        from torch._dynamo.types import FrameAction, FrameExecStrategy
    except ImportError:
        return
    from .emulation import EmulationMode
    from .float64 import Float64Mode
    from .twin import TwinMode

    for mode in (EmulationMode, Float64Mode, TwinMode):
        code = mode.__torch_function__.__code__
        set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def _drawing_outside_graphs(dropout):
    """An aligned dropout, ``torch._dynamo.disable``d: Dynamo breaks its graph only where it
    draws a mask (nanoGPT's ``nn.Dropout(0.0)`` layers stay in the graph)."""

    def traced(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        return dropout(input, p, training, inplace)

    return traced
