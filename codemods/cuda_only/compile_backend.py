"""XLA810: ``torch.compile`` with the default (inductor) backend is dropped on XLA, where the
lazy tensor compiles the whole step (``backend="tpu"`` under TorchTPU); the migration guide's
"Unsupported Operations"."""

from __future__ import annotations

import re

import libcst as cst

from codemods.cuda_only.common import DYNAMO_DOC, TPU_COMPILE_DOC
from migrate_xla.rule.api import EQUAL, SAFE, Rule, append_keyword, call_arg, code_of, drop_items, snippet, string_value

INDUCTOR_ONLY = {"cudagraphs"}
# what torch.compile and nn.Module.compile take besides the model: a ``.compile(...)`` call on a
# value with these keywords only is nn.Module.compile (matched by shape)
COMPILE_KEYWORDS = {"fullgraph", "dynamic", "backend", "mode", "options", "disable"}
# tuning of inductor, which no other backend has
TUNING = ("mode", "options")
# where the script reads torch.compile's wrapper, which a dropped torch.compile does not make
WRAPPER = "_orig_mod"
READS_WRAPPER = re.compile(r"[\w)\]]\._orig_mod\b")  # model._orig_mod, not the prefix of its keys
DECISION = "docs/decisions.md, torch.compile on XLA"


class TorchCompileBackend(Rule):
    """``torch.compile`` with the default (inductor) backend is dropped on XLA.

    Guide, "Unsupported Operations"; PyTorch/XLA's "TorchDynamo integration"
    (https://docs.pytorch.org/xla/master/perf/dynamo.html): inductor generates Triton (GPU)
    or C++ (CPU) code and cannot compile for an XLA device; the migrated script died at its
    first compiled call ("LoweringException", "Unhandled FakeTensor Device Propagation ...
    cpu, xla:0"). On XLA the lazy tensor already records the whole training step (forward,
    backward, optimizer) and compiles it as one graph at the step's sync, which is what
    torch.compile was there for; so the fix drops torch.compile, and it is safe: the model
    computes what it computed eagerly, which is what torch.compile promises to keep.
    ``model = torch.compile(model)`` goes (a statement that only compiled), ``compiled =
    torch.compile(model)`` becomes ``compiled = model``, a ``@torch.compile`` decorator goes,
    and so does ``model.compile()`` (nn.Module.compile, matched by shape: a ``.compile()``
    statement with no arguments but torch.compile's keywords). ``mode=`` / ``options=`` tune
    inductor for NVIDIA GPUs (CUDA graphs, Triton autotuning) and ``backend="cudagraphs"`` is
    CUDA graphs: they go with it (XLA caches and replays each compiled graph anyway).

    The other fix, ``backend="openxla"`` (Dynamo hands its graphs to XLA), was measured
    against it on CPU PJRT (docs/decisions.md, "torch.compile on XLA": 3 scripts, 13 cases,
    verify in float64, torch_xla's metrics of bare runs) and is kept for where dropping
    cannot do: a script that reads the compiled wrapper (``model._orig_mod``) keeps it,
    re-backed with ``backend="openxla"``, as does a ``torch.compile(...)`` made with no model
    (a compiler kept in a name). Both keep the losses (``match`` in all 13 cases, where the
    held-back fix was an ``error`` in all); dropping compiles 2 graphs and runs one a step
    where openxla compiles 5 to 15 and runs 4 to 12 a step (forward, backward, the optimizer's
    lazy step); openxla's smaller graphs compile in about half XLA:CPU's seconds, and the
    step times are close (step ms and compile s: the least of 3 runs):

    | script (form) | fix | verify | compilations | executions a step | step ms | compile s |
    | --- | --- | --- | --- | --- | --- | --- |
    | compiled_gpt (nanoGPT, --compile 1) | drop | match | 2 | 1 | 17.0 | 8.1 |
    | | openxla | match | 5 | 4 | 14.7 | 4.9 |
    | compiled_speedrun (max-autotune) | drop | match | 4 | 1.1 | 5.3 | 9.7 |
    | | openxla | match | 10 | 5.2 | 6.6 | 6.1 |
    | compiled_forms --form module | drop | match | 2 | 1 | 2.4 | 3.2 |
    | | openxla | match | 7 | 4 | 2.5 | 1.4 |
    | compiled_forms --form dynamic | drop | match | 2 | 1 | 2.9 | 2.3 |
    | | openxla | match | 15 | 12 | 3.8 | 1.7 |
    | compiled_forms --form step (a compiled training step) | drop | match | 2 | 1 | 3.4 | 2.3 |
    | | openxla | match | 6 | 4 | 3.4 | 1.6 |

    One graph a step is what a TPU runs best: PyTorch/XLA's Dynamo page ("Feature gaps")
    says forward and backward as separate graphs, each execution with a fixed launch cost,
    make Dynamo less efficient than the lazy tensor in real training, whose tracing a TPU
    overlaps with the execution (which CPU PJRT, the device being the same cores, cannot).

    Other backends (``openxla``, ``eager``, ``aot_eager``, a variable, a function) are
    left as written.

    Under ``--runtime torch-tpu`` the backend is TorchTPU's, ``backend="tpu"``, which it
    registers for ``torch.compile`` (the way to run a whole step as one graph on TorchTPU,
    which is eager otherwise): inductor compiles GPU or CPU code, not TPU code, so the
    fix re-backs ``torch.compile``, ``@torch.compile`` and ``model.compile()`` with it, and
    drops ``mode=`` / ``options=`` (and ``cudagraphs``), which have no TPU meaning.
    """

    CODE = "XLA810"
    NAME = "torch-compile-backend"
    SUMMARY = "torch.compile with inductor is dropped (XLA compiles the whole step anyway); backend='tpu' on TorchTPU"
    FIX = SAFE
    SEVERITY = "error"
    TRIGGERS = (r"\.compile\b(?<!\bre\.compile)", r"import[^\n]*\bcompile\b")  # not re.compile
    BEFORE = "model = torch.compile(model)\ncompiled_loss = torch.compile(loss_fn)\n"
    AFTER = "compiled_loss = loss_fn\n"

    DROPPED = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not XLA: removed{tuning}, "
        "since the lazy tensor compiles the whole training step on XLA anyway "
        f'(`backend="openxla"` would hand Dynamo\'s graphs to XLA: 4 or more graphs a step, not one; {DECISION}); '
        f"see {DYNAMO_DOC}"
    )
    REBACKED = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not XLA: "
        '`backend="openxla"` compiles for the XLA device{tuning} ({why}); see ' + DYNAMO_DOC
    )
    TPU_MESSAGE = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not TPU code: "
        '`backend="{backend}"` compiles for the TPU with TorchTPU\'s backend (or drop '
        "`torch.compile`: TorchTPU runs the model eagerly){tuning}; see " + TPU_COMPILE_DOC
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._decorators: set[int] = set()  # id of each decorator's expression
        self._reads_wrapper: bool | None = None

    # -- what to do ----------------------------------------------------------------------
    def _backend(self) -> str:
        """The backend ``torch.compile`` gets on this run's runtime."""
        return self.ctx.api.compile_backend

    def _drops(self) -> bool:
        """Whether this run drops torch.compile (PyTorch/XLA, and the script never reads the
        wrapper torch.compile makes) rather than re-backing it."""
        if self.ctx.runtime != "torch-xla":
            return False
        if self._reads_wrapper is None:
            self._reads_wrapper = any(READS_WRAPPER.search(text or "") for text in (self.ctx.source, self.ctx.left_out))
        return not self._reads_wrapper

    @staticmethod
    def _gpu_backend(args) -> str | None:
        """The GPU backend a torch.compile call (or decorator, or ``.compile()``) with ``args``
        compiles with, ``"inductor"`` by default; None for any other backend."""
        backend = next((a for a in args if a.keyword is not None and a.keyword.value == "backend"), None)
        name = string_value(backend.value) if backend is not None else "inductor"
        return name if name in ("inductor", *INDUCTOR_ONLY) else None

    @staticmethod
    def _tuning(args, backend: str) -> list[str]:
        """What of ``args`` tunes inductor (``mode="max-autotune"``, ``options=``, the cudagraphs
        backend), quoted for the message."""
        tuned = [
            f"`{a.keyword.value}={snippet(a.value)}`"
            for a in args
            if a.keyword is not None
            and a.keyword.value in TUNING
            and code_of(a.value) != "None"
            and not (a.keyword.value == "mode" and string_value(a.value) == "default")
        ]
        if backend in INDUCTOR_ONLY:
            tuned.insert(0, f'`backend="{backend}"` (CUDA graphs)')
        return tuned

    @staticmethod
    def _with(tuned: list[str]) -> str:
        """The clause of a dropped torch.compile saying its tuning goes with it."""
        if not tuned:
            return ""
        return f" with {' and '.join(tuned)}, which {'tunes' if len(tuned) == 1 else 'tune'} inductor for NVIDIA GPUs"

    @staticmethod
    def _without(tuned: list[str]) -> str:
        """The clause of a re-backed torch.compile saying its tuning goes."""
        if not tuned:
            return ""
        one = len(tuned) == 1
        return f"; {' and '.join(tuned)} {'goes' if one else 'go'}: {'it tunes' if one else 'they tune'} inductor for NVIDIA GPUs"

    def _rebacked(self, updated: cst.Call) -> cst.Call:
        """``updated`` compiling with this runtime's backend, without inductor's tuning."""
        backend = cst.SimpleString(f'"{self._backend()}"')
        args = drop_items(updated.args, lambda a: a.keyword is not None and a.keyword.value in TUNING)
        if any(a.keyword is not None and a.keyword.value == "backend" for a in args):
            args = [a.with_changes(value=backend) if a.keyword and a.keyword.value == "backend" else a for a in args]
            return updated.with_changes(args=args)
        return append_keyword(updated.with_changes(args=args), "backend", backend)

    def _message(self, code: str, tuned: list[str], dropped: bool, no_model: bool = False) -> str:
        if self.ctx.runtime != "torch-xla":
            return self.TPU_MESSAGE.format(code=code, backend=self._backend(), tuning=self._without(tuned))
        if dropped:
            return self.DROPPED.format(code=code, tuning=self._with(tuned))
        why = (
            "made with no model, a compiler kept for later: no model to leave in its place"
            if no_model
            else f"kept rather than dropped: the script reads the compiled wrapper's `{WRAPPER}`"
        )
        return self.REBACKED.format(code=code, tuning=self._without(tuned), why=why)

    # -- torch.compile(model) --------------------------------------------------------------
    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._decorators.add(id(node.decorator))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self._decorators and self._drops():
            return updated  # leave_Decorator removes it
        if self.qualname(original.func) != "torch.compile" or any(a.star for a in original.args):
            return updated
        backend = self._gpu_backend(original.args)
        if backend is None:
            return updated
        tuning = self._tuning(original.args, backend)
        target = call_arg(updated, 0, "model")
        if self._drops() and target is not None:
            value = target.value
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return self.replace(original, updated, value, self._message(snippet(original), tuning, True))
        code = ("@" if id(original) in self._decorators else "") + snippet(original)
        message = self._message(code, tuning, False, no_model=target is None)
        return self.replace(original, updated, self._rebacked(updated), message)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        # `model = torch.compile(model)` would be left as `model = model`: the statement goes
        # (its finding stays)
        if (
            len(updated.targets) == 1
            and isinstance(original.value, cst.Call)
            and self.fixes(original.value)
            and self._drops()
            and self.qualname(original.value.func) == "torch.compile"
            and code_of(updated.value) == code_of(updated.targets[0].target)
            and code_of(updated.value) != code_of(original.value)
        ):
            return cst.RemoveFromParent()
        return updated

    # -- @torch.compile ----------------------------------------------------------------------
    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        decorator = original.decorator
        call = decorator if isinstance(decorator, cst.Call) else None
        if self.qualname(call.func if call else decorator) != "torch.compile":
            return updated
        if call is not None and (any(a.star for a in call.args) or any(a.keyword is None for a in call.args)):
            return updated
        backend = self._gpu_backend(call.args if call else ())
        if backend is None:
            return updated
        tuning = self._tuning(call.args if call else (), backend)
        code = "@" + snippet(decorator)
        if self._drops():
            return self.replace(decorator, updated, cst.RemoveFromParent(), self._message(code, tuning, True))
        if call is not None:
            return updated  # leave_Call re-backed it
        rebacked = cst.Call(
            func=updated.decorator,
            args=[cst.Arg(cst.SimpleString(f'"{self._backend()}"'), keyword=cst.Name("backend"), equal=EQUAL)],
        )
        return self.replace(
            decorator, updated, updated.with_changes(decorator=rebacked), self._message(code, [], False)
        )

    # -- model.compile() ---------------------------------------------------------------------
    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        if (
            isinstance(call, cst.Call)
            and self.qualname(call.func) == "torch.compile"
            and self.fixes(call)
            and self._drops()
            and code_of(updated.value) != code_of(call)
        ):
            return cst.RemoveFromParent()  # `torch.compile(model)` as a statement would be left as `model`
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "compile"
            and self.qualname(call.func) is None  # a value's method, not a module's function (re.compile)
            and all(a.keyword is not None and a.keyword.value in COMPILE_KEYWORDS for a in call.args)
        ):
            return updated
        backend = self._gpu_backend(call.args)
        if backend is None:
            return updated
        tuning = self._tuning(call.args, backend)
        code = snippet(call)
        if self.ctx.runtime == "torch-xla":
            # nothing reads a wrapper here: Module.compile compiles the module in place
            message = (
                self.DROPPED.format(code=code, tuning=self._with(tuning)) + " (nn.Module.compile, matched by shape)"
            )
            return self.replace(call, updated, cst.RemoveFromParent(), message)
        message = self._message(code, tuning, False) + " (nn.Module.compile, matched by shape)"
        return self.replace(call, updated, updated.with_changes(value=self._rebacked(updated.value)), message)
