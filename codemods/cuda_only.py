"""XLA8xx: CUDA-only code is never kept silently, nor half-converted.

The migration guide's "Unsupported Operations" and "Debugging and Profiling": what
only exists on NVIDIA GPUs must be replaced by a person, and these rules say where and
with what (one TODO comment a statement, an error for ``--check``). Where an XLA
counterpart keeps the meaning, the rule converts instead: NVTX ranges become
``torch_xla.debug.profiler`` traces (XLA804), and ``torch.compile`` gets the ``openxla``
backend (XLA810, unsafe). XLA899 catches what no rule named.
"""

from __future__ import annotations

import re
from typing import Callable, ClassVar

import libcst as cst

from codemods.devices import KEPT_CUDA_CHECKS, is_cuda_literal
from migrate_xla.engine import _drop_removed_lines as drop_removed_lines
from migrate_xla.rule import (
    CUDA_WORD, EQUAL, SAFE, UNSAFE, Import, Rule, append_keyword, call_arg, children, code_of, find, names_trigger,
    snippet, string_value, words,
)

CUDA_MODULES = ("torch.cuda", "torch.backends.cudnn", "torch.backends.cuda")
_BLOCKS = (cst.BaseSuite, cst.BaseStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)
GUIDE = "https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html"

# What to do instead, by the CUDA API (a qualified name, or a prefix ending in ".").
HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("torch.cuda.amp.",),
        "is CUDA mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)`, "
        "which needs no GradScaler; see https://docs.pytorch.org/xla/master/perf/amp.html",
    ),
    (
        ("torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.current_stream", "torch.cuda.default_stream",
         "torch.cuda.Event", "torch.cuda.StreamContext", "torch.cuda.ExternalStream"),
        "is a CUDA stream or event: XLA orders device work itself, so remove it; to time device "
        f"work, call `torch_xla.sync(wait=True)` and read `time.perf_counter()`; see {GUIDE}",
    ),
    (
        ("torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.make_graphed_callables", "torch.cuda.graphs."),
        "captures a CUDA graph: XLA already compiles each step into one cached graph, so call the "
        f"model directly; see {GUIDE}",
    ),
    (
        ("torch.cuda.nvtx.",),
        "is an NVTX range: mark the region with `torch_xla.debug.profiler.Trace(name)` instead; "
        "see https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm",
    ),
    (
        ("torch.cuda.device", "torch.cuda.device_of"),
        f"selects a CUDA device: each XLA process owns one device, `torch_xla.device()`; remove it; see {GUIDE}",
    ),
    (
        ("torch.backends.cudnn.", "torch.backends.cuda."),
        f"is a cuDNN / CUDA library setting XLA does not use: remove it; see {GUIDE}",
    ),
)
TENSOR_TYPE_HINT = (
    "is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., "
    f"dtype=...)`) and move it with `.to(torch_xla.device())`; see {GUIDE}"
)
STRING_HINT = (
    "names a CUDA device: on XLA use `torch_xla.device()` (or `\"xla\"`), and load checkpoints "
    f"with `map_location=\"cpu\"`; see {GUIDE}"
)
DEFAULT_HINT = f"has no automatic XLA rewrite; see {GUIDE}"

# Calls whose string arguments are messages, not devices: print("cuda"), logger.info("cuda").
MESSAGE_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log", "write"}

_MESSAGE_PARTS = (cst.Arg, cst.IfExp, cst.BinaryOperation, cst.ConcatenatedString, cst.Tuple, cst.Element)


def is_message_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and func.attr.value in MESSAGE_METHODS


class CudaReferenceLeft(Rule):
    """A CUDA reference that no rule converted is flagged on its statement.

    Runs after every other rule (it has the highest code) and looks at the migrated
    statement: a ``torch.cuda`` / ``torch.backends.cudnn`` name, a ``.cuda()`` call or a
    ``"cuda"`` device string still there would crash or silently mean the CPU on a
    TPU VM, so a person has to migrate it. The comment says what to do for the
    well-known CUDA-only APIs (streams, events, CUDA graphs, NVTX, ``torch.cuda.amp``,
    legacy ``torch.cuda.FloatTensor`` types). Imports are not flagged: they are removed
    when the code no longer uses them. Strings passed to ``print`` or a logging call
    are messages, not devices, and are not flagged either.
    """

    CODE = "XLA899"
    NAME = "cuda-reference-left"
    SUMMARY = "CUDA references no rule could convert are flagged for a person"
    FIX = None
    SEVERITY = "error"
    # What it flags spells a word starting with cuda (a name under torch.cuda*, a .cuda()
    # call, a "cuda..." string), or the word cudnn (torch.backends.cudnn)
    TRIGGERS = (r"cud(?<!\wcud)(?:a|nn\b)",)
    BEFORE = "stream = torch.cuda.Stream()\n"
    AFTER = (
        "# TODO(xla-migrate): XLA899 `torch.cuda.Stream` is a CUDA stream or event: XLA orders "
        "device work itself, so remove it; to time device work, call `torch_xla.sync(wait=True)` "
        f"and read `time.perf_counter()`; see {GUIDE}\n"
        "stream = torch.cuda.Stream()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.suspects: set[int] = set()  # statements whose original code mentions CUDA

    def _suspect(self) -> None:
        if self.ctx.statements:
            self.suspects.add(id(self.ctx.statements[-1]))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("cuda", "cudnn") or (self.ctx.aliases.get(node.value) or "").startswith(CUDA_MODULES):
            self._suspect()

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if is_cuda_literal(node):
            self._suspect()

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if is_cuda_literal(node):
            self._suspect()

    def leave_SimpleStatementLine(self, original, updated):
        return self._check(original, updated)

    def on_compound(self, original, updated):
        return self._check(original, updated)

    leave_If = leave_While = leave_For = leave_With = leave_FunctionDef = leave_ClassDef = on_compound
    leave_Try = leave_Match = on_compound

    def _check(self, original: cst.CSTNode, updated: cst.CSTNode):
        if id(original) not in self.suspects or isinstance(updated, cst.RemovalSentinel):
            return updated
        if self.ctx.todos.get(id(original)):
            return updated  # another rule already flagged this statement with what to do
        if isinstance(updated, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in updated.body
        ):
            return updated
        left = self._find(updated)
        if left is not None:
            self.flag(original, f"`{snippet(left)}` {self._hint(left)}")
        return updated

    def _hint(self, node: cst.CSTNode) -> str:
        if isinstance(node, (cst.SimpleString, cst.FormattedString)):
            return STRING_HINT
        name = self.qualname(node) or ""
        for apis, hint in HINTS:
            if any(name == api or name.startswith(api if api.endswith(".") else f"{api}.") for api in apis):
                return hint
        if name.startswith("torch.cuda.") and name.endswith("Tensor"):
            return TENSOR_TYPE_HINT
        return DEFAULT_HINT

    def _find(self, node: cst.CSTNode, message: bool = False) -> cst.CSTNode | None:
        """The first CUDA reference in ``node``, not looking into nested statements.

        ``message``: an argument of print() or a logging call (or a part of one: a
        branch of a conditional, a concatenated piece), where a ``"cuda"`` string is
        text for a person; a call inside the argument is looked at as usual.
        """
        if id(node) in self.ctx.shared.get(KEPT_CUDA_CHECKS, ()):
            return None  # a check XLA104 left for CUDA on purpose: it guards a CUDA-only feature
        if isinstance(node, (cst.Attribute, cst.Name)):
            if (self.qualname(node) or "").startswith(CUDA_MODULES):
                return node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            return node
        if isinstance(node, (cst.SimpleString, cst.FormattedString)) and is_cuda_literal(node) and not message:
            return node
        message = is_message_call(node) or (message and isinstance(node, _MESSAGE_PARTS))
        for child in _references_in(node):
            found = None if isinstance(child, _BLOCKS) else self._find(child, message)
            if found is not None:
                return found
        return None


def _references_in(node: cst.CSTNode):
    """The children of ``node`` that can refer to something: not the ``sync`` of
    ``torch_xla.sync``, a keyword, or the name a definition or parameter binds (those
    could match an alias such as ``from torch.cuda import synchronize as sync``)."""
    if isinstance(node, cst.Attribute):
        return [node.value]
    if isinstance(node, cst.Arg):
        return [node.value]
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param)):
        return [child for child in children(node) if child is not node.name]
    return children(node)


# -- XLA801-XLA810: the CUDA-only APIs the guide names, each with what to do instead ----------

PROFILING_DOC = "https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm"
PALLAS_DOC = "https://docs.pytorch.org/xla/master/features/pallas.html"
DYNAMO_DOC = "https://docs.pytorch.org/xla/master/perf/dynamo.html"
PROFILER = Import("torch_xla.debug.profiler", asname="xp")


def _dotted(node: cst.CSTNode) -> str | None:
    """``self.stream`` for a chain of names and attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


class CudaOnlyApi(Rule):
    """Base of the rules that flag an API with no XLA counterpart: one finding a statement.

    ``APIS`` maps qualified names (a name also covers its attributes; a key ending in
    ``.`` is a module prefix) to what the message says after the name: what it is and
    what to do instead. The most specific key wins. Imports are not flagged: they are
    removed once nothing uses them, and neither are type annotations. With ``TRACK``, a
    name bound to the result of calling one of the APIs (``start = torch.cuda.Event()``,
    ``self.stream = torch.cuda.Stream()``), or a function a flagged decorator made, is
    flagged where it is used (``start.record()``). The table is by name: a plain name
    bound in a function is forgotten when the function ends, ``self.x`` and module-level
    names last for the file, and a name assigned anything else is forgotten.
    """

    FIX = None
    SEVERITY = "error"
    APIS: ClassVar[dict[str, str]] = {}
    TRACK: ClassVar[bool] = False
    SKIP_INSIDE: ClassVar[bool] = False  # statements nested in a flagged one are not flagged again

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flagged: dict[int, str] = {}  # statement id -> the API it was flagged for
        self.tracked: dict[str, str] = {}  # local name -> the API its value came from
        self.scopes: list[list[str]] = []  # names tracked in each enclosing function
        self.annotations = 0  # depth inside type annotations, which are not uses
        self.not_references: set[int] = set()  # names that bind or are attributes, not references
        self.keys = sorted(self.APIS, key=len, reverse=True)
        self.roots = {key.split(".")[0] for key in self.APIS}  # a quick no for most names

    def api_of(self, name: str | None) -> str | None:
        if name is None or name.split(".", 1)[0] not in self.roots:
            return None
        for key in self.keys:
            stem = key.rstrip(".")
            if name == stem or name.startswith(f"{stem}."):
                return key
        return None

    def accept(self, node: cst.CSTNode) -> bool:
        """Whether a reference to an API is reported (a rule that converts some says no)."""
        return True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_references.add(id(node.attr))
        self._check(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._check(node)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_references.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_references.add(id(node.name))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.not_references.add(id(node.target))  # `start = time.perf_counter()` rebinds, it does not use

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.not_references.add(id(node.name))
        self.scopes.append([])

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.annotations += 1

    def leave_Annotation(self, original, updated):
        self.annotations -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.not_references.add(id(node.name))

    def _check(self, node: cst.Name | cst.Attribute) -> None:
        if id(node) in self.not_references or self.annotations or not self.ctx.statements:
            return
        api = self.api_of(self.qualname(node))
        source = None
        if api is None:
            source = self.tracked.get(_dotted(node) or "") if self.tracked else None
            if source is None:
                return
        statement = self.ctx.statements[-1]
        if id(statement) in self.flagged or _is_import_line(statement):
            return
        inner = node.value if isinstance(node, cst.Attribute) else None
        while isinstance(inner, (cst.Attribute, cst.Name)):  # `torch.cuda` of `torch.cuda.Stream`
            self.not_references.add(id(inner))
            inner = inner.value if isinstance(inner, cst.Attribute) else None
        if not self.accept(node):
            return
        if self.SKIP_INSIDE and any(id(s) in self.flagged for s in self.ctx.statements[:-1]):
            return
        if source is not None:
            message = f"`{_dotted(node)}` holds a `{source}`, which {self.APIS[self.api_of(source)]}"
        else:
            message = self.message(node, api)
        self.flagged[id(statement)] = source or self.qualname(node) or ""
        self.flag(node, message)

    def message(self, node: cst.CSTNode, api: str) -> str:
        """What the finding on a reference to ``api`` says."""
        return f"`{snippet(node)}` {self.APIS[api]}"

    def leave_SimpleStatementLine(self, original, updated):
        if self.TRACK:
            flagged_for = self.flagged.get(id(original))
            for small in original.body:
                targets = (
                    [t.target for t in small.targets] if isinstance(small, cst.Assign)
                    else [small.target] if isinstance(small, cst.AnnAssign) else []
                )
                value = getattr(small, "value", None)
                made = (
                    flagged_for is not None and isinstance(value, cst.Call)
                    and self.qualname(value.func) == flagged_for
                )
                for target in targets:
                    name = _dotted(target)
                    if name is None:
                        continue
                    if made:
                        self._track(name, flagged_for)
                    else:
                        self.tracked.pop(name, None)
        return updated

    def _track(self, name: str, api: str) -> None:
        if "." in name or not self.scopes:
            self.ctx.need_whole_module()  # it lasts for the file: uses in code a slice left out
        self.tracked[name] = api
        if self.scopes and "." not in name:
            self.scopes[-1].append(name)

    def leave_FunctionDef(self, original, updated):
        for name in self.scopes.pop():
            self.tracked.pop(name, None)
        if self.TRACK and id(original) in self.flagged:
            self._track(original.name.value, self.flagged[id(original)])
        return updated


class CudaStream(CudaOnlyApi):
    """CUDA streams are flagged: XLA has no user-visible streams.

    Guide, "Unsupported Operations": a ``torch.cuda.Stream``, ``with
    torch.cuda.stream(s):`` or ``torch.cuda.current_stream().wait_stream(s)`` orders
    work on an NVIDIA GPU; XLA orders the work of a step itself, so the stream code
    goes and what ran on the side stream runs in order. Names bound to a stream are
    flagged where used (``s.synchronize()``).
    """

    CODE = "XLA801"
    NAME = "cuda-stream"
    SUMMARY = "torch.cuda.Stream, torch.cuda.stream(...) and wait_stream are flagged"
    TRACK = True
    APIS = {
        api: "is a CUDA stream: XLA has no user streams and orders device work itself; remove it "
        f"and run the code it wrapped in order; see {GUIDE}"
        for api in (
            "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.current_stream", "torch.cuda.default_stream",
            "torch.cuda.set_stream", "torch.cuda.StreamContext", "torch.cuda.ExternalStream", "torch.cuda.streams.",
        )
    }
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


class CudaEvent(CudaOnlyApi):
    """CUDA events are flagged: they time nothing on XLA.

    Guide, "Debugging and Profiling": GPU timing tools do not see XLA work, and XLA runs
    a step lazily, when ``torch_xla.sync()`` comes, so ``start.record()`` /
    ``end.elapsed_time(start)`` would measure tracing, not the device. Names bound to an
    event are flagged where used.
    """

    CODE = "XLA802"
    NAME = "cuda-event"
    SUMMARY = "torch.cuda.Event and its record() / elapsed_time() timing are flagged"
    TRACK = True
    APIS = {
        api: "is a CUDA event: XLA runs work lazily, so it times nothing; time a region with "
        "`torch_xla.sync(wait=True)` then `time.perf_counter()` at each end, or trace it with "
        f"`torch_xla.debug.profiler`; see {PROFILING_DOC}"
        for api in ("torch.cuda.Event", "torch.cuda.streams.Event")
    }
    TRIGGERS = (names_trigger(*APIS),)  # as XLA801's
    REQUIRES = (CUDA_WORD,)
    BEFORE = "start = torch.cuda.Event(enable_timing=True)\nstart.record()\n"
    AFTER = (
        f"# TODO(xla-migrate): XLA802 `torch.cuda.Event` {APIS['torch.cuda.Event']}\n"
        "start = torch.cuda.Event(enable_timing=True)\n"
        f"# TODO(xla-migrate): XLA802 `start` holds a `torch.cuda.Event`, which {APIS['torch.cuda.Event']}\n"
        "start.record()\n"
    )


class CudaGraph(CudaOnlyApi):
    """CUDA graph capture is flagged: XLA compiles each step into a cached graph already.

    Guide, "Understanding Lazy Execution": what ``torch.cuda.CUDAGraph`` /
    ``torch.cuda.graph`` / ``make_graphed_callables`` buy on a GPU (one launch for a
    whole step) is how XLA always runs. The capture, its static input buffers and
    ``graph.replay()`` go; call the model directly. Names bound to a graph are flagged
    where used (``g.replay()``).
    """

    CODE = "XLA803"
    NAME = "cuda-graph"
    SUMMARY = "torch.cuda.CUDAGraph, torch.cuda.graph and make_graphed_callables are flagged"
    TRACK = True
    APIS = {
        api: "captures a CUDA graph: XLA already compiles each step into one cached graph; call the "
        f"model directly and drop the capture, its static buffers and `replay()`; see {GUIDE}"
        for api in (
            "torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.graphs.", "torch.cuda.make_graphed_callables",
        )
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
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
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
        """The local name of torch_xla.debug.profiler, or None when ``xp`` means something else."""
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
            "torch_xla raises \"Expecting scope to be empty\" when `torch_xla.sync()` runs inside an "
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


CUDA_SOURCE = re.compile(r"\.cuh?\b")
CPP_EXTENSION = "torch.utils.cpp_extension."
KERNEL_HINT = (
    "its kernels run only on NVIDIA GPUs: on TPU write them as a Pallas kernel "
    f"(`torch_xla.experimental.custom_kernel`), or express them in PyTorch ops XLA compiles; see {PALLAS_DOC}"
)


class CudaExtension(CudaOnlyApi):
    """C++/CUDA extensions built from ``.cu`` sources are flagged: their kernels need a GPU.

    Guide, "Unsupported Operations": XLA lowers PyTorch ops, not CUDA kernels. Flagged:
    ``CUDAExtension`` (``setup.py``), and ``torch.utils.cpp_extension.load`` /
    ``load_inline`` when given ``.cu`` / ``.cuh`` sources, ``cuda_sources=`` or
    ``with_cuda=True``; the module they return is flagged where used. A C++-only
    extension is left alone: it runs on the CPU (slowly, like any CPU fallback).
    """

    CODE = "XLA805"
    NAME = "cuda-extension"
    SUMMARY = "CUDAExtension and cpp_extension.load / load_inline of .cu sources are flagged"
    TRIGGERS = (r"cpp_extension",)
    TRACK = True
    APIS = {
        f"{CPP_EXTENSION}CUDAExtension": f"builds a CUDA extension: {KERNEL_HINT}",
        f"{CPP_EXTENSION}load": f"builds a CUDA extension from `.cu` sources: {KERNEL_HINT}",
        f"{CPP_EXTENSION}load_inline": f"builds a CUDA extension from CUDA sources: {KERNEL_HINT}",
    }
    BEFORE = (
        "from torch.utils.cpp_extension import load\n"
        'ext = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])\n'
        "y = ext.forward(x)\n"
    )
    AFTER = (
        "from torch.utils.cpp_extension import load\n"
        f"# TODO(xla-migrate): XLA805 `load` {APIS[f'{CPP_EXTENSION}load']}\n"
        'ext = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])\n'
        f"# TODO(xla-migrate): XLA805 `ext` holds a `{CPP_EXTENSION}load`, which "
        f"{APIS[f'{CPP_EXTENSION}load']}\n"
        "y = ext.forward(x)\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.cpu_only: set[int] = set()  # load(...) references whose sources are C++ only

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname(node.func) in (f"{CPP_EXTENSION}load", f"{CPP_EXTENSION}load_inline"):
            if not any(self._builds_cuda(arg) for arg in node.args):
                self.cpu_only.add(id(node.func))

    def _builds_cuda(self, arg: cst.Arg) -> bool:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "cuda_sources":
            return True
        if keyword == "with_cuda":
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
        return find(arg.value, lambda n: bool(CUDA_SOURCE.search(string_value(n) or ""))) is not None

    def accept(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.cpu_only


class TritonKernel(CudaOnlyApi):
    """Triton kernels are flagged: Triton generates GPU code, XLA devices run Pallas kernels.

    Guide, "Unsupported Operations"; PyTorch/XLA's "Custom Kernels via Pallas"
    (https://docs.pytorch.org/xla/master/features/pallas.html) is the TPU counterpart
    of a Triton kernel. A ``@triton.jit`` (or ``@triton.autotune``)
    function gets one TODO (its body is not flagged line by line), and so does each
    statement that launches it (``kernel[grid](...)``) or uses ``triton`` otherwise.
    """

    CODE = "XLA806"
    NAME = "triton-kernel"
    SUMMARY = "Triton kernels and their launches are flagged (write a Pallas kernel instead)"
    TRIGGERS = (words("triton"),)  # names under triton. (the names it tracks were first one of them)
    TRACK = True
    SKIP_INSIDE = True
    APIS = {
        "triton.": "is a Triton kernel, which runs only on GPUs: on TPU write it as a Pallas kernel "
        "(`torch_xla.experimental.custom_kernel`), or express it in PyTorch ops XLA fuses itself; "
        f"see {PALLAS_DOC}",
    }
    BEFORE = (
        "import triton\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, n):\n"
        "    pass\n"
        "add_kernel[(1,)](x, 4)\n"
    )
    AFTER = (
        "import triton\n"
        f"# TODO(xla-migrate): XLA806 `add_kernel` {APIS['triton.']}\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, n):\n"
        "    pass\n"
        f"# TODO(xla-migrate): XLA806 `add_kernel` holds a `triton.jit`, which {APIS['triton.']}\n"
        "add_kernel[(1,)](x, 4)\n"
    )

    def message(self, node: cst.CSTNode, api: str) -> str:
        statement = self.ctx.statements[-1]
        if isinstance(statement, cst.FunctionDef):  # @triton.jit: the kernel is what the message is about
            return f"`{statement.name.value}` {self.APIS[api]}"
        return super().message(node, api)


APEX_AMP = (
    "is apex mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)` around the forward "
    "pass; bfloat16 needs no loss scaling, so `amp.initialize` and `amp.scale_loss` go; see "
    "https://docs.pytorch.org/xla/master/perf/amp.html"
)


class Apex(CudaOnlyApi):
    """NVIDIA apex is flagged: its fused kernels are CUDA-only; PyTorch has the counterparts.

    Guide, "Unsupported Operations" (and "Automatic Mixed Precision" for ``apex.amp``).
    Each message names the PyTorch replacement: ``torch.optim.AdamW`` / ``Adam`` / ``SGD``
    for the fused optimizers, ``torch.nn.LayerNorm`` / ``RMSNorm`` for the fused norms,
    ``torch.autocast('xla', dtype=torch.bfloat16)`` for ``apex.amp``, PyTorch's DDP for
    ``apex.parallel``. Not rewritten: the options differ (``adam_w_mode``,
    ``set_grad_none``, opt levels), so a person picks the equivalent.
    """

    CODE = "XLA807"
    NAME = "apex"
    SUMMARY = "NVIDIA apex (fused optimizers and norms, amp, parallel) is flagged with its PyTorch counterpart"
    TRIGGERS = (words("apex"),)
    APIS = {
        "apex.": "is NVIDIA apex, whose fused kernels are CUDA-only: use the PyTorch module or function "
        f"it fuses; see {GUIDE}",
        "apex.amp": APEX_AMP,
        "apex.optimizers.": "is an apex fused CUDA optimizer: use its `torch.optim` counterpart; XLA fuses "
        f"the update itself; see {GUIDE}",
        "apex.optimizers.FusedAdam": "is apex's fused CUDA Adam: use `torch.optim.AdamW` (FusedAdam's "
        f"default `adam_w_mode=True`) or `torch.optim.Adam`; see {GUIDE}",
        "apex.optimizers.FusedSGD": f"is apex's fused CUDA SGD: use `torch.optim.SGD`; see {GUIDE}",
        "apex.optimizers.FusedAdagrad": f"is apex's fused CUDA Adagrad: use `torch.optim.Adagrad`; see {GUIDE}",
        "apex.optimizers.FusedLAMB": "is apex's fused CUDA LAMB: PyTorch has no LAMB; use "
        f"`torch.optim.AdamW` or a LAMB written in PyTorch ops; see {GUIDE}",
        "apex.normalization.FusedLayerNorm": f"is apex's fused CUDA LayerNorm: use `torch.nn.LayerNorm`; see {GUIDE}",
        "apex.normalization.FusedRMSNorm": f"is apex's fused CUDA RMSNorm: use `torch.nn.RMSNorm`; see {GUIDE}",
        "apex.parallel.": "is apex's CUDA data parallelism: use `torch.nn.parallel.DistributedDataParallel` "
        "with the `xla` process group backend, or `xm.optimizer_step` in `torch_xla.launch`; see "
        "https://docs.pytorch.org/xla/master/perf/ddp.html",
    }
    BEFORE = (
        "from apex.optimizers import FusedAdam\n"
        "optimizer = FusedAdam(model.parameters(), lr=1e-3)\n"
    )
    AFTER = (
        "from apex.optimizers import FusedAdam\n"
        f"# TODO(xla-migrate): XLA807 `FusedAdam` {APIS['apex.optimizers.FusedAdam']}\n"
        "optimizer = FusedAdam(model.parameters(), lr=1e-3)\n"
    )


class Cupy(CudaOnlyApi):
    """CuPy is flagged: its arrays live on an NVIDIA GPU.

    Guide, "Unsupported Operations": on an XLA device, array work is PyTorch ops on the
    device (``torch.from_dlpack`` does not reach an XLA tensor either), or NumPy on the host.
    """

    CODE = "XLA808"
    NAME = "cupy"
    SUMMARY = "CuPy arrays and kernels are flagged (use torch ops on the XLA device, or NumPy)"
    TRIGGERS = (words("cupy"),)
    APIS = {
        "cupy.": "is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the XLA device, "
        f"or NumPy on the host; see {GUIDE}",
    }
    BEFORE = "import cupy as cp\nweights = cp.asarray(host_weights)\n"
    AFTER = (
        "import cupy as cp\n"
        f"# TODO(xla-migrate): XLA808 `cp.asarray` {APIS['cupy.']}\n"
        "weights = cp.asarray(host_weights)\n"
    )


class NvmlQuery(CudaOnlyApi):
    """NVML queries (``pynvml``, ``py3nvml``, ``nvidia_smi``, ``GPUtil``) are flagged: no NVIDIA driver on a TPU VM.

    Guide, "Debugging and Profiling": PyTorch/XLA has its own tools. Memory use is
    ``xm.get_memory_info(device)`` (TPU; not on CPU PJRT), and compile and execution
    counts are in ``torch_xla.debug.metrics``. The ``nvidia-smi`` command, run with
    ``subprocess``, ``os.system`` or a notebook's ``!nvidia-smi``, is flagged too.
    """

    CODE = "XLA809"
    NAME = "nvml-query"
    SUMMARY = "pynvml / nvidia_smi / GPUtil GPU queries and nvidia-smi commands are flagged"
    TRIGGERS = (r"nvml|nvidia_smi|nvidia-smi|GPUtil",)
    APIS = {
        api: "queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with "
        "`xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; "
        "see https://docs.pytorch.org/xla/master/learn/troubleshoot.html"
        for api in ("pynvml.", "py3nvml.", "nvidia_smi.", "GPUtil.")
    }
    BEFORE = "import pynvml\npynvml.nvmlInit()\n"
    AFTER = f"import pynvml\n# TODO(xla-migrate): XLA809 `pynvml.nvmlInit` {APIS['pynvml.']}\npynvml.nvmlInit()\n"

    def visit_Call(self, node: cst.Call) -> None:
        """``os.system("nvidia-smi")``, ``subprocess.run(["nvidia-smi", ...])``; not ``print("nvidia-smi ...")``."""
        if not self.ctx.statements or id(self.ctx.statements[-1]) in self.flagged or is_message_call(node):
            return
        for arg in node.args:
            command = arg.value
            if isinstance(command, (cst.List, cst.Tuple)) and command.elements:
                command = command.elements[0].value  # the program of an argument list
            if NVIDIA_SMI.match(string_value(command) or ""):
                self.flagged[id(self.ctx.statements[-1])] = "nvidia-smi"
                self.flag(node, f"`nvidia-smi` {self.APIS['pynvml.']}")
                return


NVIDIA_SMI = re.compile(r"\s*nvidia-smi(?:\s|$)")


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
    """

    CODE = "XLA810"
    NAME = "torch-compile-backend"
    SUMMARY = "torch.compile's inductor backend becomes backend='openxla'; max-autotune / reduce-overhead are flagged"
    FIX = UNSAFE
    SEVERITY = "error"
    TRIGGERS = (r"\.compile\b(?<!\bre\.compile)", r"import[^\n]*\bcompile\b")  # not re.compile
    BEFORE = "model = torch.compile(model)\n"
    AFTER = 'model = torch.compile(model, backend="openxla")\n'

    MESSAGE = (
        "`{code}` compiles with inductor, which generates GPU (Triton) or CPU code, not XLA: "
        '`backend="openxla"` compiles for the XLA device (or drop `torch.compile`: XLA compiles the '
        f"training step anyway); see {DYNAMO_DOC}"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.compile" or any(a.star for a in original.args):
            return updated
        backend = call_arg(original, None, "backend")
        name = string_value(backend.value) if backend is not None else "inductor"
        if name not in ("inductor", *INDUCTOR_ONLY):
            return updated
        tuning = [
            a for a in original.args
            if a.keyword is not None and (
                (a.keyword.value == "mode" and string_value(a.value) != "default" and code_of(a.value) != "None")
                or (a.keyword.value == "options" and code_of(a.value) != "None")
            )
        ]
        if name in INDUCTOR_ONLY or tuning:
            tuned = backend if name in INDUCTOR_ONLY else tuning[0]
            what = f"`{tuned.keyword.value}={snippet(tuned.value)}`"
            self.flag(
                original,
                f"{what} tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no XLA "
                'meaning: compile with `torch.compile(..., backend="openxla")` and no mode / options, or drop '
                f"`torch.compile` (XLA compiles the training step anyway); see {DYNAMO_DOC}",
            )
            return updated
        openxla = cst.SimpleString('"openxla"')
        if backend is None:
            replacement = append_keyword(updated, "backend", openxla)
        else:
            replacement = updated.with_changes(
                args=[
                    a.with_changes(value=openxla) if a.keyword is not None and a.keyword.value == "backend" else a
                    for a in updated.args
                ]
            )
        return self.replace(original, updated, replacement, self.MESSAGE.format(code=snippet(original)))

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        if not isinstance(original.decorator, (cst.Name, cst.Attribute)):
            return updated
        if self.qualname(original.decorator) != "torch.compile":
            return updated
        call = cst.Call(
            func=updated.decorator,
            args=[cst.Arg(cst.SimpleString('"openxla"'), keyword=cst.Name("backend"), equal=EQUAL)],
        )
        return self.replace(
            original.decorator,
            updated,
            updated.with_changes(decorator=call),
            self.MESSAGE.format(code="@" + snippet(original.decorator)),
        )
