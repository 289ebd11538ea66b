"""XLA810: ``torch.compile`` with the default (inductor) backend gets
``backend="openxla"`` (``"tpu"`` under TorchTPU; unsafe; the migration guide's "Unsupported Operations")."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.common import DYNAMO_DOC, TPU_COMPILE_DOC
from migrate_xla.rule import EQUAL, UNSAFE, Rule, append_keyword, call_arg, code_of, snippet, string_value

INDUCTOR_ONLY = {"cudagraphs"}


class TorchCompileBackend(Rule):
    """``torch.compile`` with the default (inductor) backend gets ``backend="openxla"``.

    Guide, "Unsupported Operations"; PyTorch/XLA's "TorchDynamo integration"
    (https://docs.pytorch.org/xla/master/perf/dynamo.html): inductor
    generates Triton (GPU) or C++ (CPU) code and cannot compile for an XLA device;
    ``backend="openxla"`` hands Dynamo's graphs to XLA. The fix is unsafe: Dynamo
    training on XLA is experimental, and dropping ``torch.compile`` is the other choice,
    since XLA compiles the step's graph anyway. ``mode=`` (other than ``"default"``) and
    ``options=`` tune inductor and are passed on to the backend, and
    ``backend="cudagraphs"`` is CUDA graphs: those are flagged. A bare ``@torch.compile``
    decorator becomes ``@torch.compile(backend="openxla")``. Other backends (``openxla``,
    ``eager``, ``aot_eager``, a variable, a function) are left as written.

    Under ``--runtime torch-tpu`` the backend is TorchTPU's, ``backend="tpu"``, which it
    registers for ``torch.compile`` (the way to run a whole step as one graph on TorchTPU,
    which is eager otherwise); ``mode=`` / ``options=`` and ``cudagraphs`` are flagged the same way.
    """

    CODE = "XLA810"
    NAME = "torch-compile-backend"
    SUMMARY = "torch.compile's inductor backend becomes backend='openxla'; max-autotune / reduce-overhead are flagged"
    FIX = UNSAFE
    SEVERITY = "error"
    MARK_HELD_BACK = True  # held back, the migrated code cannot compile for the XLA device
    TRIGGERS = (r"\.compile\b(?<!\bre\.compile)", r"import[^\n]*\bcompile\b")  # not re.compile
    BEFORE = "model = torch.compile(model)\n"
    AFTER = 'model = torch.compile(model, backend="openxla")\n'

    MESSAGE = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not XLA: "
        '`backend="openxla"` compiles for the XLA device (or drop `torch.compile`: XLA compiles the '
        f"training step anyway); see {DYNAMO_DOC}"
    )

    TPU_MESSAGE = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not TPU code: "
        '`backend="{backend}"` compiles for the TPU with TorchTPU\'s backend (or drop '
        f"`torch.compile`: TorchTPU runs the model eagerly); see {TPU_COMPILE_DOC}"
    )

    def _backend(self) -> str:
        """The backend ``torch.compile`` gets on this run's runtime."""
        return self.ctx.api.compile_backend

    def _message(self, code: str) -> str:
        return (self.MESSAGE if self.ctx.runtime == "torch-xla" else self.TPU_MESSAGE).format(
            code=code, backend=self._backend()
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.compile" or any(a.star for a in original.args):
            return updated
        backend = call_arg(original, None, "backend")
        name = string_value(backend.value) if backend is not None else "inductor"
        if name not in ("inductor", *INDUCTOR_ONLY):
            return updated
        tuning = [
            a
            for a in original.args
            if a.keyword is not None
            and (
                (a.keyword.value == "mode" and string_value(a.value) != "default" and code_of(a.value) != "None")
                or (a.keyword.value == "options" and code_of(a.value) != "None")
            )
        ]
        if name in INDUCTOR_ONLY or tuning:
            tuned = backend if name in INDUCTOR_ONLY else tuning[0]
            what = f"`{tuned.keyword.value}={snippet(tuned.value)}`"
            if self.ctx.runtime == "torch-xla":
                message = (
                    f"{what} tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no XLA "
                    'meaning: compile with `torch.compile(..., backend="openxla")` and no mode / options, or drop '
                    f"`torch.compile` (XLA compiles the training step anyway); see {DYNAMO_DOC}"
                )
            else:
                message = (
                    f"{what} tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no "
                    f'TPU meaning: compile with `torch.compile(..., backend="{self._backend()}")` and no '
                    f"mode / options, or drop `torch.compile` (TorchTPU runs the model eagerly); see {TPU_COMPILE_DOC}"
                )
            self.flag(original, message)
            return updated
        openxla = cst.SimpleString(f'"{self._backend()}"')
        if backend is None:
            replacement = append_keyword(updated, "backend", openxla)
        else:
            replacement = updated.with_changes(
                args=[
                    a.with_changes(value=openxla) if a.keyword is not None and a.keyword.value == "backend" else a
                    for a in updated.args
                ]
            )
        return self.replace(original, updated, replacement, self._message(snippet(original)))

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        if not isinstance(original.decorator, (cst.Name, cst.Attribute)):
            return updated
        if self.qualname(original.decorator) != "torch.compile":
            return updated
        call = cst.Call(
            func=updated.decorator,
            args=[cst.Arg(cst.SimpleString(f'"{self._backend()}"'), keyword=cst.Name("backend"), equal=EQUAL)],
        )
        return self.replace(
            original.decorator,
            updated,
            updated.with_changes(decorator=call),
            self._message("@" + snippet(original.decorator)),
        )
