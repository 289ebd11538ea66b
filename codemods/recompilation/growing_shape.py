"""XLA705: tensors that grow at every iteration of a loop are flagged: every length
compiles a graph (the migration guide's "Understanding Recompilations"); a sampling loop
that feeds the grown tensor back to the model gets its graph cut every token."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.recompilation.common import (
    DYNAMIC_SHAPES_DOC,
    RECOMPILATION_DOC,
    TRAINING_PATH,
    CompiledOnly,
    in_training_path,
)
from codemods.shared.statements import call_of, carried_name
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import (
    ON_ACCELERATOR,
    SAFE,
    TORCH_XLA,
    Rule,
    call_arg,
    find,
    names_trigger,
    snippet,
    subtree,
    words,
)

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
# TorchTPU's: the model runs eagerly where it is not compiled
EAGER_HINT = (
    "write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then "
    "`buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask "
    "of the positions filled so far; or call the uncompiled model in this loop, which TorchTPU runs eagerly "
    "at no compilation cost"
)
GROWS_COMPILED = (
    "every length is a new shape, for which `torch.compile` compiles the model's graph again (until it marks "
    "that length dynamic)"
)
SYNCS = frozenset({"torch_xla.sync", "torch_xla.core.xla_model.mark_step"})
# the calls a crop statement may make besides slicing: it reads lengths, it runs nothing
LENGTH_CALLS = frozenset({"size", "len", "dim", "numel"})


# A slice (``[`` and ``:`` on one line) after a ``range`` or ``enumerate`` (the loops whose
# index leave_Subscript follows): the loop's header comes before its body, in the same unit
# of a slice. The scan from a ``range`` passes over other text and brackets that are not
# slices, and stops at the first slice or at the next ``range``, so a text without such a
# slice is read once, not once per ``range``. It never backtracks: what the lookahead
# matched is taken as a whole (an atomic group, which ``re`` spells only from Python 3.11).
_LOOP_COUNTER = words("range", "enumerate")
_NO_SLICE = r"(?:[^\[re]+|\[(?![^\]\n]*:)|(?!" + _LOOP_COUNTER + r")[re])*"
LOOP_INDEX_SLICE = _LOOP_COUNTER + r"(?=(?P<run>" + _NO_SLICE + r"))(?P=run)\[[^\]\n]*:"


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


class GrowingShape(CompiledOnly, Rule):
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

    A loop that feeds the grown tensor back (a sampling loop: ``idx`` is read again, as
    the model's input) and trains nothing gets its graph cut, so that its tokens no longer
    pile up into one lazy graph (measured: a trainer that sampled 500 tokens in a callback
    built one graph of 500 forward passes that did not compile within 15 minutes):
    ``torch_xla.sync()`` goes right before the concatenation, and, when the loop crops
    its input into a statement of its own (``idx_cond = idx if idx.size(1) <= block_size
    else idx[:, -block_size:]``) that the concatenation's statement does not read (the model
    runs in a statement of its own), right after that statement too. Then the model's input is
    a tensor of its own: once ``idx`` holds ``block_size`` tokens every token runs the
    same compiled graph, and the crop and the concatenation, whose shapes still change,
    run as small graphs of their own. Measured on CPU PJRT (a small transformer, 40
    tokens from 4, block size 16): 12 compilations of the model's graph instead of 40
    with a sync at the end of the iteration (the crop of a longer ``idx`` in the same graph
    made every token's graph new), 3 times faster. Such a loop is fixed, not flagged,
    when it crops; without a crop its input grows with every token, and the finding stays.

    Otherwise report only. A list that collects the pieces (``outs.append(y)``) and one
    ``torch.cat`` after the loop is the fix when the loop only accumulates, but it changes
    what an empty loop returns and the dtype an empty starting tensor promotes to; a
    fixed-size buffer with a position index (what the guide means by padding to fixed
    sizes) changes what the model reads, so a person writes it.

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, which compiles the
    graph again for every new length (the family's docstring), and report only: TorchTPU runs
    eagerly, so a sampling loop piles no graph up and gets no ``torch_xla.sync()``.
    """

    CODE = "XLA705"
    NAME = "growing-shape"
    SUMMARY = (
        "tensors concatenated onto themselves or sliced by the loop index in a loop are flagged; "
        "a sampling loop gets torch_xla.sync() per token"
    )
    FIX = SAFE
    SEVERITY = "warning"
    TRIGGERS = (names_trigger(*CONCATENATIONS), LOOP_INDEX_SLICE)
    REQUIRES = (ON_ACCELERATOR, TRAINING_PATH, r"(?m:^[ \t\f]*(?:async[ \t]+)?(?:for|while)\b)")  # a loop
    BEFORE = (
        "for _ in range(max_new_tokens):\n"
        "    idx_cond = idx[:, -block_size:]\n"
        "    logits = model(idx_cond)\n"
        "    idx_next = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)\n"
        "    idx = torch.cat((idx, idx_next), dim=1)\n"
    )
    AFTER = (
        "for _ in range(max_new_tokens):\n"
        "    idx_cond = idx[:, -block_size:]\n"
        "    torch_xla.sync()\n"
        "    logits = model(idx_cond)\n"
        "    idx_next = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)\n"
        "    torch_xla.sync()\n"
        "    idx = torch.cat((idx, idx_next), dim=1)\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.plans: dict[int, tuple[int | None, int | None, str, bool]] = {}  # id(loop) -> where the syncs go

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        call = original.value
        if len(original.targets) != 1 or not isinstance(call, cst.Call):
            return updated
        key = carried_name(original.targets[0].target)
        pieces = call_arg(call, 0, "tensors")
        if (
            key is None
            or self.qualname(call.func) not in CONCATENATIONS
            or pieces is None
            or not isinstance(pieces.value, (cst.Tuple, cst.List))
            or not any(carried_name(e.value) == key for e in pieces.value.elements)
        ):
            return updated
        loops = _loops(self.ctx.statements)
        if not loops or not in_training_path(self.ctx.statements) or not self._carried(loops[0], original, key):
            return updated
        crop = self._crop(loops[0], key)
        fed_back = self._read_in(loops[0], original, key)  # the loop feeds it back: sampling, say
        if not self.matters():
            return updated
        if not self.ctx.api.lazy:
            self._flag_compiled(original, key, crop, fed_back)
            return updated
        if fed_back and self._plan_syncs(loops[0], original, key):
            return updated  # the loop crops its input: cut every token, one graph after the crop
        if fed_back:
            hint = f"a graph a token when sampling text); {BUFFER_HINT}"
        else:
            hint = f"a graph a batch); {LIST_HINT}"
        cropped = (
            f"; the crop `{crop}` does not help: it keeps the shape only once `{key}` is that long, and "
            f"`{key}` itself still grows"
            if crop
            else ""
        )
        if crop and fed_back:
            cropped += (
                f"; crop into a name of its own (`{key}_cond = {crop}`) and call the model in a statement of its own "
                "before the concatenation: xla-migrate then cuts the graph between them, and the model's graph is "
                "compiled once for the cropped length"
            )
        self.flag(
            original,
            f"`{snippet(original)}` makes `{key}` longer at every iteration of the loop: every length is a "
            f"new shape, and XLA compiles a new graph for each ({hint}{cropped}; see {GUIDE_RECOMPILATIONS}",
        )
        return updated

    def _flag_compiled(self, original: cst.Assign, key: str, crop: str | None, fed_back: bool) -> None:
        """The finding under ``torch.compile`` (TorchTPU)."""
        cropped = (
            f"; the crop `{crop}` does not help: it keeps the shape only once `{key}` is that long, and "
            f"`{key}` itself still grows"
            if crop
            else ""
        )
        self.flag(
            original,
            f"`{snippet(original)}` makes `{key}` longer at every iteration of the loop: {GROWS_COMPILED}; "
            f"{EAGER_HINT if fed_back else LIST_HINT}{cropped}; see {DYNAMIC_SHAPES_DOC}",
        )

    # -- a sampling loop: its graph cut every token ------------------------------------------
    def _plan_syncs(self, loop: cst.For | cst.While, grow: cst.Assign, key: str) -> bool:
        """Plans the syncs of a sampling loop (carried out as the loop is left); True when the
        loop crops its input, so that nothing is left to flag. The growing statement must be
        a line of the loop's own body, and the loop must train nothing."""
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        line = self.ctx.statements[-1] if self.ctx.statements else None
        at = next((i for i, statement in enumerate(body) if statement is line), None)
        if at is None or len(line.body) != 1 or calls_training_step(loop.body):
            return False
        crop = self._crop_statement(body[:at], key)
        if crop is not None and _mentions(grow.value, {body[crop].body[0].targets[0].target.value}):
            crop = None  # the model reads the crop in the concatenation's statement: its graph holds the growing `idx`
        before = None if at > 0 and self._is_sync(body[at - 1]) else at
        after = None if crop is None or self._is_sync(body[crop + 1]) else crop + 1
        if before is not None or after is not None:
            cut = f"`torch_xla.sync()` added before `{snippet(grow)}`"
            if crop is not None:
                cut += f" and after `{snippet(body[crop].body[0])}`"
            self.plans[id(loop)] = (after, before, cut, crop is not None)
            self.ctx.shared.setdefault("sampling_loops", set()).add(id(loop))  # XLA203 adds no sync at its end
        return crop is not None

    def _crop_statement(self, body: Sequence[cst.BaseStatement], key: str) -> int | None:
        """The line of ``body`` that crops ``key`` into a name of its own and does nothing
        else (``idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]``)."""
        for i, statement in enumerate(body):
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                continue
            small = statement.body[0]
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and self._crop(small.value, key)
                and all(_length_call(n) for n in subtree(small.value) if isinstance(n, cst.Call))
            ):
                return i
        return None

    def _is_sync(self, statement: cst.BaseStatement) -> bool:
        call = call_of(statement)
        return call is not None and self.qualname(call.func) in SYNCS

    def _cut(self, original: cst.For | cst.While, updated: cst.For | cst.While):
        plan = self.plans.pop(id(original), None)
        if plan is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        extra = len(body) - len(original.body.body)
        if extra < 0 or (extra and not all(self._is_sync(s) for s in body[-extra:])):
            return updated  # another rule changed this body but for a sync at its end: the next pass
        after, before, cut, cropped = plan
        for index in sorted((i for i in (after, before) if i is not None), reverse=True):
            body.insert(index, cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression("torch_xla.sync()"))]))
        return self.replace(
            original,
            updated,
            updated.with_changes(body=updated.body.with_changes(body=body)),
            f"{cut}: the sampling loop runs a graph a token instead of piling every token into one graph"
            + ("; once the input is cropped, each token reuses one compiled graph of the model" if cropped else "")
            + f"; see {GUIDE_RECOMPILATIONS}",
            imports=[TORCH_XLA],
        )

    def leave_For(self, original: cst.For, updated: cst.For):
        return self._cut(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While):
        return self._cut(original, updated)

    def _assignments(self, loop: cst.CSTNode, key: str):
        """The assignments to ``key`` in ``loop``'s body, in code order."""
        for node in subtree(loop.body):
            if isinstance(node, cst.Assign) and any(carried_name(t.target) == key for t in node.targets):
                yield node
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and carried_name(node.target) == key:
                yield node

    def _carried(self, loop: cst.CSTNode, grow: cst.Assign, key: str) -> bool:
        """Whether ``key`` keeps growing from one iteration to the next."""
        if isinstance(loop, cst.For) and find(loop.target, lambda n: carried_name(n) == key) is not None:
            return False  # bound afresh by the loop
        seen = False
        for node in self._assignments(loop, key):
            if node is grow:
                seen = True
                continue
            value = getattr(node, "value", None)
            if not seen:
                return False  # assigned fresh earlier in the iteration
            if isinstance(value, cst.Subscript) and carried_name(value.value) == key:
                return False  # cut back afterwards: a sliding window of one length
        return True

    def _read_in(self, loop: cst.CSTNode, grow: cst.Assign, key: str) -> bool:
        """Whether the loop reads ``key`` other than to grow it (a model input, say), also in
        the growing statement itself (``idx = torch.cat((idx, model(idx)[:, -1:]), 1)``)."""
        pieces = call_arg(grow.value, 0, "tensors").value
        grown = [t.target for t in grow.targets] + [e.value for e in pieces.elements if carried_name(e.value) == key]
        inside = {id(n) for node in grown for n in subtree(node)}
        for node in subtree(loop.body):
            if id(node) not in inside and isinstance(node, (cst.Name, cst.Attribute)) and carried_name(node) == key:
                return True
        return False

    def _crop(self, within: cst.CSTNode, key: str) -> str | None:
        """``idx[:, -block_size:]`` in a loop's body (or an expression): the last elements, once there are enough."""
        for node in subtree(within.body if isinstance(within, (cst.For, cst.While)) else within):
            if isinstance(node, cst.Subscript) and carried_name(node.value) == key:
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
            if not self.matters():
                break
            index = next(n for n in indices if _mentions(part.lower if bounds[0] else part.upper, {n}))
            if not self.ctx.api.lazy:
                self.flag(
                    original,
                    f"`{snippet(original)}` is sliced by the loop index `{index}`: its length changes at every "
                    "iteration, a new shape each time, for which `torch.compile` compiles again (until it marks "
                    f"that length dynamic); slice a fixed length (`x[:, {index}:{index} + W]` of an input padded by "
                    f"W) or keep the full length and mask the positions past `{index}`; see {DYNAMIC_SHAPES_DOC}",
                )
                break
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


def _length_call(call: cst.Call) -> bool:
    """``idx.size(1)``, ``len(idx)``: a call that reads a length (a crop may make them)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in LENGTH_CALLS
