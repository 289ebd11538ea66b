"""XLA899: a CUDA reference that no rule converted is flagged on its statement, with
what to do instead (the migration guide's "Unsupported Operations")."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.common import (
    GUIDE,
    TPU_AMP_GUIDE,
    TPU_COMPILE_BACKEND,
    TPU_COMPILE_DOC,
    TPU_GUIDE,
    TPU_PROFILING_DOC,
    is_message_call,
)
from codemods.shared.device_values import KEPT_CUDA_CHECKS, is_cuda_literal
from migrate_xla.rule.api import CUDA_REFERENCE_LEFT, TRIVIA, Rule, children, snippet, subclasses

CUDA_MODULES = ("torch.cuda", "torch.backends.cudnn", "torch.backends.cuda")
_BLOCKS = (cst.BaseSuite, cst.BaseStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)

# What to do instead, by the CUDA API (a qualified name, or a prefix ending in ".").
HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("torch.cuda.amp.",),
        "is CUDA mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)`, "
        "which needs no GradScaler; see https://docs.pytorch.org/xla/master/perf/amp.html",
    ),
    (
        (
            "torch.cuda.Stream",
            "torch.cuda.stream",
            "torch.cuda.current_stream",
            "torch.cuda.default_stream",
            "torch.cuda.Event",
            "torch.cuda.StreamContext",
            "torch.cuda.ExternalStream",
        ),
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
    (
        ("torch.cuda.OutOfMemoryError",),
        "is CUDA's out-of-memory error, raised by the operation that allocates: on XLA the "
        "operations only trace, and running out of device memory raises a RuntimeError whose "
        "message says RESOURCE_EXHAUSTED when the step's graph runs (at `torch_xla.sync()` or "
        f"a value read such as `.item()`): catch that around the sync; see {GUIDE}",
    ),
)
TENSOR_TYPE_HINT = (
    "is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., "
    f"dtype=...)`) and move it with `.to(torch_xla.device())`; see {GUIDE}"
)
STRING_HINT = (
    'names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints '
    f'with `map_location="cpu"`; see {GUIDE}'
)
DEFAULT_HINT = f"has no automatic XLA rewrite; see {GUIDE}"

# Under --runtime torch-tpu: what to do instead, by the CUDA API, before the test for a
# torch.tpu counterpart (``ctx.api.mirror``); streams and events have one (XLA801, XLA802)
TPU_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("torch.cuda.amp.",),
        "is CUDA mixed precision: use `torch.autocast('tpu', dtype=torch.bfloat16)`, "
        f"which needs no GradScaler; see {TPU_AMP_GUIDE}",
    ),
    (
        ("torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.make_graphed_callables", "torch.cuda.graphs."),
        "captures a CUDA graph, which TorchTPU does not have: call the model directly, or compile it with "
        f'`torch.compile(model, backend="{TPU_COMPILE_BACKEND}")`; see {TPU_COMPILE_DOC}',
    ),
    (
        ("torch.cuda.nvtx.",),
        "is an NVTX range: label the region with `torch.profiler.record_function(name)`, or remove it; "
        f"see {TPU_PROFILING_DOC}",
    ),
    (
        ("torch.backends.cudnn.", "torch.backends.cuda."),
        f"is a cuDNN / CUDA library setting TorchTPU does not use: remove it; see {TPU_GUIDE}",
    ),
)
TPU_STRING_HINT = (
    'names a CUDA device: on TorchTPU use `{device}` (or `"{device_type}"`), and load checkpoints '
    f'with `map_location="cpu"`; see {TPU_GUIDE}'
)
TPU_TENSOR_TYPE_HINT = (
    "is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., "
    f"dtype=...)`) and move it with `.to({{device}})`; see {TPU_GUIDE}"
)
TPU_MIRROR_HINT = "has a TorchTPU counterpart: use `{mirror}`; see " + TPU_GUIDE
TPU_UNMIRRORED_HINT = (
    "is not in `torch.tpu`, which mirrors only part of `torch.cuda` (no memory statistics, no CUDA "
    f"graphs): remove it or find its TorchTPU equivalent; see {TPU_GUIDE}"
)
TPU_MOVE_HINT = "moves to a CUDA device: on TorchTPU use `.to({device})`; see " + TPU_GUIDE
TPU_DEFAULT_HINT = f"has no automatic TorchTPU rewrite; see {TPU_GUIDE}"

_MESSAGE_PARTS = (cst.Arg, cst.IfExp, cst.BinaryOperation, cst.ConcatenatedString, cst.Tuple, cst.Element)


# Exact type checks (_find runs on every node of a statement)
_REFERENCES = subclasses(cst.Attribute, cst.Name)
_STRINGS = subclasses(cst.SimpleString, cst.FormattedString)
# Not looked into: nested statements (_BLOCKS), and layout (TRIVIA), below which nothing refers to anything
_NOT_SEARCHED = subclasses(*_BLOCKS) | TRIVIA


class CudaReferenceLeft(Rule):
    """A CUDA reference that no rule converted is flagged on its statement.

    Runs after every other rule (it has the highest code) and looks at the migrated
    statement: a ``torch.cuda`` / ``torch.backends.cudnn`` name, a ``.cuda()`` call or a
    ``"cuda"`` device string still there would crash or silently mean the CPU on a
    TPU VM, so a person has to migrate it. The comment says what to do for the
    well-known CUDA-only APIs (streams, events, CUDA graphs, NVTX, ``torch.cuda.amp``,
    legacy ``torch.cuda.FloatTensor`` types). Imports are not flagged: they are removed
    when the code no longer uses them. Strings passed to ``print`` or a logging call
    are messages, not devices, and are not flagged either. Under ``--runtime torch-tpu`` the
    comment names TorchTPU's counterpart: ``torch.tpu.X`` for a ``torch.cuda.X`` that
    ``torch.tpu`` has, and says so for one it has not (memory statistics, CUDA graphs).
    """

    CODE = CUDA_REFERENCE_LEFT
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
        if self.ctx.runtime != "torch-xla":
            return self._runtime_hint(node)
        if isinstance(node, (cst.SimpleString, cst.FormattedString)):
            return STRING_HINT
        name = self.qualname(node) or ""
        for apis, hint in HINTS:
            if any(name == api or name.startswith(api if api.endswith(".") else f"{api}.") for api in apis):
                return hint
        if name.startswith("torch.cuda.") and name.endswith("Tensor"):
            return TENSOR_TYPE_HINT
        return DEFAULT_HINT

    def _runtime_hint(self, node: cst.CSTNode) -> str:
        """``_hint`` under TorchTPU: the spellings of ``ctx.api``, and ``torch.tpu.X`` for a
        ``torch.cuda.X`` that ``torch.tpu`` has (any other is not in its table)."""
        api = self.ctx.api
        if isinstance(node, (cst.SimpleString, cst.FormattedString)):
            return TPU_STRING_HINT.format(device=api.device, device_type=api.device_type)
        if isinstance(node, cst.Call):  # x.cuda()
            return TPU_MOVE_HINT.format(device=api.device)
        name = self.qualname(node) or ""
        for apis, hint in TPU_HINTS:
            if any(name == api or name.startswith(api if api.endswith(".") else f"{api}.") for api in apis):
                return hint
        if name.startswith("torch.cuda.") and name.endswith("Tensor"):
            return TPU_TENSOR_TYPE_HINT.format(device=api.device)
        if name.startswith("torch.cuda."):
            mirror = api.mirror(name) if name.count(".") == 2 else None
            return TPU_MIRROR_HINT.format(mirror=mirror) if mirror else TPU_UNMIRRORED_HINT
        return TPU_DEFAULT_HINT

    def _find(self, node: cst.CSTNode, message: bool = False) -> cst.CSTNode | None:
        """The first CUDA reference in ``node``, not looking into nested statements.

        ``message``: an argument of print() or a logging call (or a part of one: a
        branch of a conditional, a concatenated piece), where a ``"cuda"`` string is
        text for a person; a call inside the argument is looked at as usual.
        """
        if id(node) in self.ctx.shared.get(KEPT_CUDA_CHECKS, ()):
            return None  # a check XLA104 left for CUDA on purpose: it guards a CUDA-only feature
        kind = type(node)
        if kind in _REFERENCES:
            if (self.qualname(node) or "").startswith(CUDA_MODULES):
                return node
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "cuda":
            return node
        if kind in _STRINGS and is_cuda_literal(node) and not message:
            return node
        message = is_message_call(node) or (message and isinstance(node, _MESSAGE_PARTS))
        for child in _references_in(node):
            found = None if type(child) in _NOT_SEARCHED else self._find(child, message)
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
    if isinstance(node, (cst.Try, cst.TryStar)):  # what its handlers catch, flagged above the `try:`
        return [handler.type for handler in node.handlers if handler.type is not None]
    return children(node)
