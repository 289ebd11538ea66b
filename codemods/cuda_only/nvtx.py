"""XLA804: NVTX ranges become ``torch_xla.debug.profiler`` traces; the rest of NVTX is
flagged (the migration guide's "Debugging and Profiling"); under TorchTPU all of it is flagged."""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from codemods.cuda_only.common import PROFILING_DOC, TPU_PROFILING_DOC, CudaOnlyApi
from migrate_xla.rule.api import CUDA_WORD, SAFE, Import, drop_removed_lines, find, names_trigger, snippet

PROFILER = Import("torch_xla.debug.profiler", asname="xp")

NVTX_RANGE = "torch.cuda.nvtx.range"
NVTX_PUSH = "torch.cuda.nvtx.range_push"
NVTX_POP = "torch.cuda.nvtx.range_pop"
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.FormattedString)

STEP_CALL = re.compile(r"sync|mark_step|step|train|fit|epoch|eval|valid|test|run|loop|iter", re.IGNORECASE)


def _runs_a_step(nodes) -> bool:
    """Whether code may reach a ``torch_xla.sync()``: a loop, or a call named like a step (guessed)."""

    def boundary(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.For, cst.While)):
            return True
        if isinstance(node, cst.Call):
            func = node.func
            name = (
                func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            )
            return bool(STEP_CALL.search(name))
        return False

    return any(find(node, boundary) is not None for node in nodes)


class NvtxRange(CudaOnlyApi):
    """NVTX ranges become ``torch_xla.debug.profiler`` traces; the rest of NVTX is flagged.

    Guide, "Debugging and Profiling": Nsight does not see XLA work; torch_xla's profiler
    does, and ``xp.Trace(name)`` labels a region the way an NVTX range does, changing
    nothing that runs (so the fix is safe) as long as the region holds no step boundary
    (below). So
    ``with torch.cuda.nvtx.range(msg):`` becomes ``with xp.Trace(msg):``, the decorator
    ``@torch.cuda.nvtx.range(msg)`` becomes ``@xp.trace_me(msg)`` (extra arguments
    format ``msg``, as NVTX does), and a ``range_push(msg)`` with its ``range_pop()``
    later in the same block becomes ``with xp.Trace(msg):`` around the statements between
    them. Pushes and pops in different blocks, ``mark``, ``range_start`` / ``range_end``,
    ``torch.cuda.profiler`` and ``torch.autograd.profiler.emit_nvtx`` are flagged, with
    ``xp.start_trace`` / ``xp.stop_trace`` for the profiler switches. Nothing is
    converted where ``xp`` already names something else.

    An ``xp.Trace`` must not contain a step boundary: measured on torch_xla 2.9,
    ``torch_xla.sync()`` inside one raises "Expecting scope to be empty". So a range is
    converted only when its region has no loop and calls nothing whose name says it
    ends or runs a step (``sync``, ``mark_step``, ``step``, ``train``, ``fit``,
    ``epoch``, ``eval``, ``valid``, ``test``, ``run``, ``loop``, ``iter``): an
    ``optimizer.step()`` in it would get its ``torch_xla.sync()`` from XLA201. Other
    ranges are flagged, saying so. A helper with another name that syncs inside the
    range is not seen; torch_xla then stops at the first step with that message.

    Under ``--runtime torch-tpu`` every NVTX and CUDA profiler reference is flagged: TorchTPU's
    profiler module (``torch.tpu.profiler``) has no range API of its own, so the message names
    PyTorch's ``torch.profiler.record_function(name)``, which labels a region on any device, and
    ``torch.profiler.profile`` for the capture.
    """

    CODE = "XLA804"
    NAME = "nvtx-range"
    SUMMARY = "NVTX ranges become torch_xla.debug.profiler traces; other CUDA profiler calls are flagged"
    FIX = SAFE
    APIS = {
        "torch.cuda.nvtx.": "is an NVTX marker with no one-to-one XLA counterpart: label the region with "
        "`with xp.Trace(name):` (`import torch_xla.debug.profiler as xp`), pushing and popping in one "
        f"block; see {PROFILING_DOC}",
        "torch.cuda.profiler.": "drives the CUDA profiler (nsys, nvprof), which does not see XLA work: "
        "capture with `xp.start_trace(log_dir)` / `xp.stop_trace()` (`import torch_xla.debug.profiler "
        f"as xp`) and view in TensorBoard or xprof; see {PROFILING_DOC}",
        "torch.autograd.profiler.emit_nvtx": "emits NVTX ranges for the CUDA profiler, which does not see "
        "XLA work: capture with `xp.start_trace(log_dir)` / `xp.stop_trace()` (`import "
        f"torch_xla.debug.profiler as xp`); see {PROFILING_DOC}",
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            "torch.cuda.nvtx.": "is an NVTX marker, which TorchTPU's profiler does not read: label the region "
            "with `with torch.profiler.record_function(name):` (pushing and popping in one block), or remove "
            f"it; see {TPU_PROFILING_DOC}",
            "torch.cuda.profiler.": "drives the CUDA profiler (nsys, nvprof), which does not see TPU work: "
            f"capture with `torch.profiler.profile(...)`, or remove it; see {TPU_PROFILING_DOC}",
            "torch.autograd.profiler.emit_nvtx": "emits NVTX ranges for the CUDA profiler, which does not see "
            f"TPU work: capture with `torch.profiler.profile(...)`, or remove it; see {TPU_PROFILING_DOC}",
        }
    }
    # It converts only torch.cuda.nvtx names and flags only names under APIS, each of
    # which spells nvtx or cuda as well
    TRIGGERS = (names_trigger(*APIS),)
    REQUIRES = (rf"{CUDA_WORD}|nvtx",)
    BEFORE = (
        "import torch_xla.debug.profiler as xp\n"  # added when missing; shown here so the example is whole
        'with torch.cuda.nvtx.range("forward"):\n    out = model(x)\n'
        'torch.cuda.nvtx.range_push("backward")\nout.sum().backward()\ntorch.cuda.nvtx.range_pop()\n'
    )
    AFTER = (
        "import torch_xla.debug.profiler as xp\n"
        'with xp.Trace("forward"):\n    out = model(x)\n'
        'with xp.Trace("backward"):\n    out.sum().backward()\n'
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.blocks: list[cst.Module | cst.IndentedBlock] = []
        self.paired: set[int] = set()  # push and pop statements that become one `with`
        self.converting: set[int] = set()  # API references this rule rewrites
        self.spanning: set[int] = set()  # range references whose region runs a whole step
        self.decorators: set[int] = set()
        # converted push / pop expressions -> ("push" / "pop", the expression): holding the
        # expression keeps its id from being reused by a later node once a `with` replaces it
        self.markers: dict[int, tuple[str, cst.Expr]] = {}

    # -- which references are converted ---------------------------------------------
    def profiler(self) -> str | None:
        """The local name of torch_xla.debug.profiler, or None when ``xp`` means something else
        or the run is not for PyTorch/XLA (nothing is converted then)."""
        if self.ctx.runtime != "torch-xla":
            return None
        bound = self.ctx.binds(PROFILER.module)
        if bound is not None:
            return bound
        return None if "xp" in self.ctx.aliases else "xp"

    def accept(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.converting

    def _kind(self, statement: cst.CSTNode) -> str | None:
        """``push`` / ``pop`` for a line that is only ``range_push(msg)`` / ``range_pop()``."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return None
        expr = statement.body[0]
        if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)):
            return None
        call, name = expr.value, self.qualname(expr.value.func)
        if name == NVTX_PUSH and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
            return "push"
        if name == NVTX_POP and not call.args:
            return "pop"
        return None

    def visit_Module(self, node) -> None:
        self.blocks.append(node)

    visit_IndentedBlock = visit_Module

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self._kind(node) != "push" or self.profiler() is None or not self.blocks:
            return
        body = list(self.blocks[-1].body)
        start = next((i for i, s in enumerate(body) if s is node), len(body))
        depth = 0
        for end in range(start + 1, len(body)):
            kind = self._kind(body[end])
            if kind == "push":
                depth += 1
            elif kind == "pop" and depth:
                depth -= 1
            elif kind == "pop":
                if _runs_a_step(body[start + 1 : end]):
                    self.spanning |= {id(node.body[0].value.func), id(body[end].body[0].value.func)}
                else:
                    self.paired |= {id(node), id(body[end])}
                return

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._region(item.item, node.body)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        for decorator in node.decorators:
            self.decorators.add(id(decorator.decorator))
            self._region(decorator.decorator, node.body)

    def _region(self, call: cst.CSTNode, body: cst.CSTNode) -> None:
        """Note whether ``nvtx.range(...)`` around ``body`` becomes a trace or is flagged."""
        if not (isinstance(call, cst.Call) and self.qualname(call.func) == NVTX_RANGE):
            return
        if self.profiler() is None or not call.args or call.args[0].keyword is not None:
            return
        if any(a.star for a in call.args) or (len(call.args) > 1 and not isinstance(call.args[0].value, _ATOMS)):
            return
        (self.spanning if _runs_a_step([body]) else self.converting).add(id(call.func))

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.statements and id(self.ctx.statements[-1]) in self.paired:
            if self.qualname(node.func) in (NVTX_PUSH, NVTX_POP):
                self.converting.add(id(node.func))

    def message(self, node: cst.CSTNode, api: str) -> str:
        if id(node) not in self.spanning:
            return super().message(node, api)
        return (
            f"`{snippet(node)}` marks a region that runs a training step (a loop, a sync or a step call): "
            'torch_xla raises "Expecting scope to be empty" when `torch_xla.sync()` runs inside an '
            "`xp.Trace`, so label the parts of the step with `with xp.Trace(name):` and capture whole "
            f"steps with `xp.start_trace(log_dir)` (`import torch_xla.debug.profiler as xp`); see {PROFILING_DOC}"
        )

    # -- rewriting ------------------------------------------------------------------------
    def _trace(self, kind: str, name: cst.BaseExpression) -> cst.Call:
        func = cst.Attribute(cst.Name(self.profiler() or "xp"), cst.Name(kind))
        return cst.Call(func=func, args=[cst.Arg(name)])

    def _imports(self) -> list[Import]:
        return [PROFILER] if self.ctx.binds(PROFILER.module) is None else []

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original.func) not in self.converting or self.qualname(original.func) != NVTX_RANGE:
            return updated
        name = updated.args[0].value
        if len(updated.args) > 1:  # nvtx.range(msg, *args, **kwargs) formats msg
            rest = [a for a in updated.args[1:]]
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            name = cst.Call(func=cst.Attribute(name, cst.Name("format")), args=rest)
        decorator = id(original) in self.decorators
        replacement = self._trace("trace_me" if decorator else "Trace", name)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: the range shows in torch_xla's profiler "
            f"(TensorBoard, xprof); see {PROFILING_DOC}",
            imports=self._imports(),
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def leave_SimpleStatementLine(self, original, updated):
        if id(original) not in self.paired:
            return super().leave_SimpleStatementLine(original, updated)
        call = original.body[0].value
        if self._kind(original) == "push":
            marker = cst.Expr(self._trace("Trace", updated.body[0].value.args[0].value))
            self.markers[id(marker)] = ("push", marker)
            message = (
                f"`{snippet(call)}` ... `range_pop()` -> `with {snippet(marker.value)}:` around the "
                f"statements between them: the range shows in torch_xla's profiler; see {PROFILING_DOC}"
            )
        else:
            marker = cst.Expr(cst.Name("__xla_migrate_nvtx_pop__"))
            self.markers[id(marker)] = ("pop", marker)
            message = "`range_pop()` closes the `xp.Trace` block made from its `range_push`"
        return self.replace(
            call,
            updated,
            updated.with_changes(body=[marker]),
            message,
            imports=self._imports(),
            drop_if_unused=self.ctx.import_behind(call.func),
        )

    def leave_Module(self, original, updated):
        self.blocks.pop()
        if not self.markers or not any(self._marker(s) for s in updated.body):
            return updated
        return updated.with_changes(body=self._wrap(list(updated.body)))

    leave_IndentedBlock = leave_Module

    def _marker(self, statement: cst.CSTNode) -> str | None:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            return self.markers.get(id(statement.body[0]), (None,))[0]
        return None

    def _wrap(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        return wrap_runs(body, self._marker, lambda push: push.body[0].value)


def wrap_runs(body: list, kind: Callable[[cst.CSTNode], str | None], opener: Callable) -> list:
    """``body`` with each run from a ``"push"`` statement to its ``"pop"`` (as ``kind`` says)
    made a ``with opener(push):`` block, nested runs too.

    The push's comments go above the ``with``; the pop's comments end its block. Runs
    must be balanced (every push has its pop in ``body``).
    """
    out: list = []
    index = 0
    while index < len(body):
        if kind(body[index]) != "push":
            out.append(body[index])
            index += 1
            continue
        depth, end = 0, index + 1
        while end < len(body) and not (kind(body[end]) == "pop" and depth == 0):
            depth += {"push": 1, "pop": -1}.get(kind(body[end]) or "", 0)
            end += 1
        push, pop = body[index], body[end]
        footer = [line for line in pop.leading_lines if line.comment is not None]
        if pop.trailing_whitespace.comment is not None:
            footer.append(cst.EmptyLine(comment=pop.trailing_whitespace.comment))
        block = cst.IndentedBlock(
            body=wrap_runs(body[index + 1 : end], kind, opener) or [cst.SimpleStatementLine(body=[cst.Pass()])],
            header=push.trailing_whitespace,
            footer=footer,
        )
        # a statement another rule removed inside the run: the engine only tidies blocks it visited
        block = drop_removed_lines(block)
        out.append(cst.With(items=[cst.WithItem(opener(push))], body=block, leading_lines=push.leading_lines))
        index = end + 1
    return out
