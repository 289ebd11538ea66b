"""XLA705: tensors that grow at every iteration of a loop are flagged: every length
compiles a graph (the migration guide's "Understanding Recompilations")."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.recompilation.common import RECOMPILATION_DOC, TRAINING_PATH, in_training_path
from migrate_xla.rule import ON_ACCELERATOR, Rule, call_arg, find, names_trigger, snippet, subtree, words

CONCATENATIONS = frozenset(
    f"torch.{name}"
    for name in ("cat", "concat", "concatenate", "hstack", "vstack", "row_stack", "column_stack", "dstack")
)
GUIDE_RECOMPILATIONS = (
    'the migration guide\'s "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/'
    f"migration-to-xla-on-tpus.html) and {RECOMPILATION_DOC}"
)
BUFFER_HINT = (
    "write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then "
    "`buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask "
    "of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape "
    "costs no compilation"
)
LIST_HINT = "collect the pieces in a list (`parts.append(y)`) and concatenate once after the loop"


# A slice (``[`` and ``:`` on one line) after a ``range`` or ``enumerate`` (the loops whose
# index leave_Subscript follows): the loop's header comes before its body, in the same unit
# of a slice. The scan from a ``range`` passes over other text and brackets that are not
# slices, and stops at the first slice or at the next ``range``, so a text without such a
# slice is read once, not once per ``range``. It never backtracks: what the lookahead
# matched is taken as a whole (an atomic group, which ``re`` spells only from Python 3.11).
_LOOP_COUNTER = words("range", "enumerate")
_NO_SLICE = r"(?:[^\[re]+|\[(?![^\]\n]*:)|(?!" + _LOOP_COUNTER + r")[re])*"
LOOP_INDEX_SLICE = _LOOP_COUNTER + r"(?=(?P<run>" + _NO_SLICE + r"))(?P=run)\[[^\]\n]*:"


def _key(node: cst.CSTNode) -> str | None:
    """``x`` or ``self.x``: a name a loop can carry; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    return find(node, lambda n: isinstance(n, cst.Name) and n.value in names) is not None


def _loops(statements: Sequence[cst.CSTNode]) -> list[cst.For | cst.While]:
    """The loops around the innermost statement, innermost first, inside its function."""
    loops = []
    for statement in reversed(statements):
        if isinstance(statement, cst.FunctionDef):
            break
        if isinstance(statement, (cst.For, cst.While)):
            loops.append(statement)
    return loops


class GrowingShape(Rule):
    """Tensors that grow at every iteration of a loop are flagged: every length compiles a graph.

    Guide, "Understanding Recompilations": XLA compiles one graph per input shape, so
    "strive for static shapes ... within your main training/evaluation loops". A
    sampling loop (minGPT's and nanoGPT's ``generate``: ``idx = torch.cat((idx,
    idx_next), dim=1)`` for each new token) gives the model a longer input at every
    step: measured on CPU PJRT, a training script that sampled 500 tokens in a callback
    compiled a graph per token and died with "LLVM ERROR: Unable to allocate section
    memory". Flagged in the training path (module docstring), in the loop's own function:

    - ``x = torch.cat((x, y), ...)`` (and ``concat``, ``hstack``, ``vstack``, ...) inside a
      ``for`` / ``while`` loop where ``x`` is carried from one iteration to the next (not
      bound by the loop or assigned fresh earlier in its body, and not cut back to its
      length later in it, as a sliding window ``x = x[:, 1:]`` is). Cropping the input
      (``idx[:, -block_size:]``) does not help until ``idx`` holds ``block_size`` tokens, and
      the concatenation itself still has a new shape every time.
    - A slice bounded by the loop's index on one side only (``x[:, :t]``, ``x[:t + 1]``,
      ``x[i:]``, with ``t`` from ``for t in range(...)`` or ``enumerate``); ``x[t]`` and
      ``x[t:t + k]`` keep their shape.

    Report only. A list that collects the pieces (``outs.append(y)``) and one
    ``torch.cat`` after the loop is the fix when the loop only accumulates, but it changes
    what an empty loop returns and the dtype an empty starting tensor promotes to; a
    fixed-size buffer with a position index (what the guide means by padding to fixed
    sizes) changes what the model reads, so a person writes it.
    """

    CODE = "XLA705"
    NAME = "growing-shape"
    SUMMARY = "tensors concatenated onto themselves or sliced by the loop index in a loop are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (names_trigger(*CONCATENATIONS), LOOP_INDEX_SLICE)
    REQUIRES = (ON_ACCELERATOR, TRAINING_PATH, r"(?m:^[ \t\f]*(?:async[ \t]+)?(?:for|while)\b)")  # a loop
    BEFORE = (
        "for _ in range(max_new_tokens):\n"
        "    logits = model(idx)\n"
        "    idx_next = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)\n"
        "    idx = torch.cat((idx, idx_next), dim=1)\n"
    )
    AFTER = (
        "for _ in range(max_new_tokens):\n"
        "    logits = model(idx)\n"
        "    idx_next = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)\n"
        "    # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, idx_next), dim=1)` makes `idx` longer at "
        "every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each "
        f"(a graph a token when sampling text); {BUFFER_HINT}; see {GUIDE_RECOMPILATIONS}\n"
        "    idx = torch.cat((idx, idx_next), dim=1)\n"
    )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        call = original.value
        if len(original.targets) != 1 or not isinstance(call, cst.Call):
            return updated
        key = _key(original.targets[0].target)
        pieces = call_arg(call, 0, "tensors")
        if (
            key is None
            or self.qualname(call.func) not in CONCATENATIONS
            or pieces is None
            or not isinstance(pieces.value, (cst.Tuple, cst.List))
            or not any(_key(e.value) == key for e in pieces.value.elements)
        ):
            return updated
        loops = _loops(self.ctx.statements)
        if not loops or not in_training_path(self.ctx.statements) or not self._carried(loops[0], original, key):
            return updated
        crop = self._crop(loops[0], key)
        if self._read_in(loops[0], original, key):  # the loop feeds it back: sampling, say
            hint = f"a graph a token when sampling text); {BUFFER_HINT}"
        else:
            hint = f"a graph a batch); {LIST_HINT}"
        cropped = (
            f"; the crop `{crop}` does not help: it keeps the shape only once `{key}` is that long, and "
            f"`{key}` itself still grows"
            if crop
            else ""
        )
        self.flag(
            original,
            f"`{snippet(original)}` makes `{key}` longer at every iteration of the loop: every length is a "
            f"new shape, and XLA compiles a new graph for each ({hint}{cropped}; see {GUIDE_RECOMPILATIONS}",
        )
        return updated

    def _assignments(self, loop: cst.CSTNode, key: str):
        """The assignments to ``key`` in ``loop``'s body, in code order."""
        for node in subtree(loop.body):
            if isinstance(node, cst.Assign) and any(_key(t.target) == key for t in node.targets):
                yield node
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and _key(node.target) == key:
                yield node

    def _carried(self, loop: cst.CSTNode, grow: cst.Assign, key: str) -> bool:
        """Whether ``key`` keeps growing from one iteration to the next."""
        if isinstance(loop, cst.For) and find(loop.target, lambda n: _key(n) == key) is not None:
            return False  # bound afresh by the loop
        seen = False
        for node in self._assignments(loop, key):
            if node is grow:
                seen = True
                continue
            value = getattr(node, "value", None)
            if not seen:
                return False  # assigned fresh earlier in the iteration
            if isinstance(value, cst.Subscript) and _key(value.value) == key:
                return False  # cut back afterwards: a sliding window of one length
        return True

    def _read_in(self, loop: cst.CSTNode, grow: cst.Assign, key: str) -> bool:
        """Whether the loop reads ``key`` other than to grow it (a model input, say)."""
        inside = {id(n) for n in subtree(grow)}
        for node in subtree(loop.body):
            if id(node) not in inside and isinstance(node, (cst.Name, cst.Attribute)) and _key(node) == key:
                return True
        return False

    def _crop(self, loop: cst.CSTNode, key: str) -> str | None:
        """``idx[:, -block_size:]`` in the loop: the last elements, once there are enough."""
        for node in subtree(loop.body):
            if isinstance(node, cst.Subscript) and _key(node.value) == key:
                last = node.slice[-1].slice
                if (
                    isinstance(last, cst.Slice)
                    and last.upper is None
                    and isinstance(last.lower, cst.UnaryOperation)
                    and isinstance(last.lower.operator, cst.Minus)
                ):
                    return snippet(node)
        return None

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        indices = self._loop_indices()
        if not indices:
            return updated
        for element in original.slice:
            part = element.slice
            if not isinstance(part, cst.Slice) or part.step is not None:
                continue
            bounds = [b is not None and _mentions(b, indices) for b in (part.lower, part.upper)]
            if bounds.count(True) != 1 or self._is_target(original) or not in_training_path(self.ctx.statements):
                continue
            index = next(n for n in indices if _mentions(part.lower if bounds[0] else part.upper, {n}))
            self.flag(
                original,
                f"`{snippet(original)}` is sliced by the loop index `{index}`: its length changes at every "
                "iteration, a new shape and a new graph each time; slice a fixed length "
                f"(`x[:, {index}:{index} + W]` of an input padded by W) or keep the full length and mask the "
                f"positions past `{index}`; see {GUIDE_RECOMPILATIONS}",
            )
            break
        return updated

    def _loop_indices(self) -> set[str]:
        """The counters of the loops around the statement: ``for t in range(...)``, ``for i, x in enumerate(...)``."""
        names = set()
        for loop in _loops(self.ctx.statements):
            if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
                continue
            func = loop.iter.func
            if isinstance(func, cst.Name) and func.value == "range" and isinstance(loop.target, cst.Name):
                names.add(loop.target.value)
            elif isinstance(func, cst.Name) and func.value == "enumerate" and isinstance(loop.target, cst.Tuple):
                first = loop.target.elements[0].value if loop.target.elements else None
                if isinstance(first, cst.Name):
                    names.add(first.value)
        return names

    def _is_target(self, node: cst.Subscript) -> bool:
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        return any(
            isinstance(small, cst.Assign)
            and any(t.target is node for t in small.targets)
            or isinstance(small, (cst.AugAssign, cst.AnnAssign))
            and small.target is node
            for small in statement.body
        )
