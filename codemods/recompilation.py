"""XLA7xx: recompilation hazards: what changes the shape or the graph of a training step.

Follows the migration guide's "Understanding Recompilations": XLA compiles one graph
per input shape and per traced program, so "strive for static shapes and computation
graphs within your main training/evaluation loops", padding inputs to fixed sizes.
See also https://docs.pytorch.org/xla/master/perf/recompilation.html.

"The training path" is approximated from the enclosing statements: code inside a
``for`` / ``while`` loop, or inside a function whose name says it runs the model
(``train``, ``step``, ``forward``, ``loss``, ``fit``, ``eval``, ``valid``, ``predict``,
``infer``), but not inside a data-side function (``__getitem__``, ``__iter__``,
``__len__``, ``__init__``, or a name with ``collate``, ``preprocess``, ``prepare``,
``load``, ``dataset``, ``tokeni[sz]e``): those run on the host, where a varying shape
costs nothing. Only the innermost function counts, so a helper called from the loop
is not looked at. Straight-line module code (building a model, loading data) is never
flagged.
"""

from __future__ import annotations

import re
from typing import Sequence

import libcst as cst

from migrate_xla.rule import (
    GAP, UNSAFE, Rule, append_keyword, call_arg, code_of, find, names_trigger, snippet, string_value, subtree,
)

RECOMPILATION_DOC = "https://docs.pytorch.org/xla/master/perf/recompilation.html"

TRAINING_FUNCTION = re.compile(r"train|step|forward|loss|fit|eval|valid|predict|infer", re.IGNORECASE)
DATA_FUNCTION = re.compile(
    r"^__(getitem|iter|len|init)__$|collate|preprocess|prepare|load|dataset|tokeni[sz]e", re.IGNORECASE
)


# A necessary condition for in_training_path: a for / while statement (it starts a line;
# comprehensions are not statements) or a function named like a training one.
TRAINING_PATH = (
    r"(?m:^[ \t\f]*(?:async[ \t]+)?(?:for|while)\b)"
    r"|def[\s\\]+\w*(?i:train|step|forward|loss|fit|eval|valid|predict|infer)"
)


def innermost_function(statements: Sequence[cst.CSTNode]) -> cst.FunctionDef | None:
    return next((s for s in reversed(statements) if isinstance(s, cst.FunctionDef)), None)


def in_training_path(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether the innermost statement runs in the training (or evaluation) step, by the
    module docstring's approximation."""
    function = innermost_function(statements)
    if function is not None:
        name = function.name.value
        if DATA_FUNCTION.search(name):
            return False
        if TRAINING_FUNCTION.search(name):
            return True
    for statement in reversed(statements):
        if statement is function:
            return False
        if isinstance(statement, (cst.For, cst.While)):
            return True
    return False


def _words(text: str) -> set[str]:
    """``train_loader``, ``valDataset``, ``self.test_ds`` -> lower-case words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.split(r"[^A-Za-z]+", spaced) if w}


EVAL_WORDS = {
    "val", "valid", "validation", "test", "testing", "eval", "evaluation", "evaluate",
    "dev", "holdout", "infer", "inference", "predict", "prediction",
}
DATALOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}


def _is_literal(node: cst.CSTNode, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


class DataLoaderDropLast(Rule):
    """A training ``DataLoader`` gets ``drop_last=True``.

    Guide, "Understanding Recompilations": when the data set does not divide into
    batches, the last batch of every epoch is smaller, has another shape, and compiles
    a graph of its own (and on a TPU pod, each process may stop at a different step).
    ``drop_last=True`` keeps one batch shape; it skips up to ``batch_size - 1`` samples an
    epoch (different ones each epoch when the loader shuffles), so the fix is unsafe.

    A loader is taken to be a training loader when it is given ``shuffle=True`` (a
    literal) or when its assignment target, its data set argument or the function that
    builds it has a word starting with ``train`` (``train_loader``, ``trainset``,
    ``get_train_loader``); a loader whose names say ``val``, ``valid``, ``test``,
    ``eval``, ``dev``, ``predict`` or ``infer`` never is (dropping evaluation samples
    changes the metric). ``drop_last=False`` becomes ``True``; loaders given
    ``batch_sampler=`` (which excludes ``drop_last``), ``batch_size=None``, a
    non-literal ``drop_last`` or ``**kwargs`` (which may carry it) are left alone.
    """

    CODE = "XLA701"
    NAME = "dataloader-drop-last"
    SUMMARY = "training DataLoaders get drop_last=True, so the last batch keeps the batch shape"
    FIX = UNSAFE
    SEVERITY = "warning"
    TRIGGERS = (r"DataLoader",)
    BEFORE = (
        "from torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(train_set, batch_size=64, shuffle=True)\n"
    )
    AFTER = (
        "from torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(train_set, batch_size=64, shuffle=True, drop_last=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in DATALOADERS or any(a.star for a in original.args):
            return updated
        batch_size = call_arg(original, 1, "batch_size")
        if call_arg(original, 4, "batch_sampler") is not None or (
            batch_size is not None and _is_literal(batch_size.value, "None")
        ):
            return updated
        drop_last = call_arg(original, 8, "drop_last")
        if drop_last is not None and not (drop_last.keyword is not None and _is_literal(drop_last.value, "False")):
            return updated
        why = self._training(original)
        if why is None:
            return updated
        if drop_last is None:
            replacement = append_keyword(updated, "drop_last", cst.Name("True"))
        else:
            replacement = updated.with_changes(
                args=[
                    a.with_changes(value=cst.Name("True"))
                    if a.keyword is not None and a.keyword.value == "drop_last" else a
                    for a in updated.args
                ]
            )
        return self.replace(
            original,
            updated,
            replacement,
            f"training DataLoader ({why}) without `drop_last=True`: its last, smaller batch has "
            "another shape and compiles another graph; `drop_last=True` skips that batch (up to "
            f"batch_size - 1 samples an epoch); see {RECOMPILATION_DOC}",
        )

    def _training(self, call: cst.Call) -> str | None:
        """Why ``call`` is taken for a training loader (for the message), or None."""
        names: list[str] = []
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names += [code_of(t.target) for t in small.targets]
                elif isinstance(small, cst.AnnAssign):
                    names.append(code_of(small.target))
        dataset = call_arg(call, 0, "dataset")
        if dataset is not None:
            names.append(code_of(dataset.value))
        function = innermost_function(self.ctx.statements)
        if function is not None:
            names.append(function.name.value)
        words = set().union(*(_words(n) for n in names)) if names else set()
        if words & EVAL_WORDS:
            return None
        shuffle = call_arg(call, 2, "shuffle")
        if shuffle is not None and _is_literal(shuffle.value, "True"):
            return "shuffle=True"
        named = next((n for n in names if any(w.startswith("train") for w in _words(n))), None)
        return f"`{' '.join(named.split())}`" if named is not None else None


# Ops whose result has as many elements as the data says: torch function -> what to do instead.
SELECT_HINT = (
    "keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide "
    "sums by `mask.sum()` where a mean is needed"
)
UNIQUE_HINT = (
    "compute it on the host outside the step, or use a fixed-size form such as "
    "`F.one_hot(x, num_classes).amax(0)` (which values occur)"
)
SHAPE_OPS = {
    "nonzero": SELECT_HINT,
    "argwhere": SELECT_HINT,
    "masked_select": SELECT_HINT,
    "unique": UNIQUE_HINT,
    "unique_consecutive": UNIQUE_HINT,
}
MASK_NAME = re.compile(r"mask", re.IGNORECASE)
INDEX_NAME = re.compile(r"idx|index|indices|ids?$|pos", re.IGNORECASE)


class DataDependentShape(Rule):
    """Ops whose output shape depends on tensor values are flagged in the training path.

    Guide, "Understanding Recompilations" (and "Unsupported Operations"): ``nonzero``,
    ``argwhere``, ``masked_select``, ``unique``, ``torch.where(cond)`` with one argument
    and boolean-mask indexing ``x[mask]`` return as many elements as the data says, so
    every new count is a new shape and a new graph. Measured on torch_xla 2.9 (CPU PJRT):
    each of them, ``x[mask] = 0`` and ``torch.nonzero_static`` included, falls back to the
    CPU (``aten::nonzero``, ``aten::_unique2``, ``aten::masked_select``), so it also cuts
    the step's graph. Report only: the rewrite (a mask multiply,
    ``torch.where``, ``masked_fill``) changes what the code computes downstream.

    Methods (``x.unique()``) are matched by shape; NumPy's ``np.unique`` and other
    non-torch functions are not. A subscript is taken for a boolean mask when its index
    is a comparison (``x[y > 0]``), an inversion or ``&`` / ``|`` of masks, a
    ``.bool()`` call, or a name with ``mask`` in it that is not an index
    (``mask_idx``). Only the training path is looked at (module docstring).
    """

    CODE = "XLA702"
    NAME = "data-dependent-shape"
    SUMMARY = "nonzero, masked_select, unique and boolean-mask indexing in the training path are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (
        names_trigger(*SHAPE_OPS),
        r"where(?<!\wwhere)(?:\(|\s+as\b)",  # torch.where(cond), or imported under another name
        # a name with mask in it as an index, so followed by ] , & | ^ or ) (the rule reads
        # mask in any case: attn_Mask)
        rf"[mM][aA][sS][kK]\w*{GAP}[\],&|^)]",
        # a subscript (not a list display) with a comparison; led by the literal [, which
        # re finds fast, and not by a class that matches at every word character
        r"\[(?<=[\w)\]]\[)[^\]\n]*(?:[<>~]|[=!]=)",
        r"\.bool\(\)",
    )
    REQUIRES = (TRAINING_PATH,)  # it flags only in the training path
    BEFORE = "for x, y in loader:\n    loss = loss_fn(model(x)[y > 0], y[y > 0])\n"
    AFTER = (
        "for x, y in loader:\n"
        "    # TODO(xla-migrate): XLA702 `model(x)[y > 0]` indexes with a boolean mask (guessed from "
        "the index): the result has as many elements as the mask is true, a new shape (and graph) "
        "for every count, and XLA computes it on the CPU; keep the shape with a mask instead: "
        "`torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is "
        f"needed; see {RECOMPILATION_DOC}\n"
        "    loss = loss_fn(model(x)[y > 0], y[y > 0])\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        name = self.qualname(func)
        if name == "torch.where" and len(original.args) == 1:
            op, hint = "torch.where(cond)", SELECT_HINT
        elif name is not None and name.startswith("torch.") and name[len("torch."):] in SHAPE_OPS:
            op, hint = name, SHAPE_OPS[name[len("torch."):]]
        elif name is None and isinstance(func, cst.Attribute) and func.attr.value in SHAPE_OPS:
            op, hint = f".{func.attr.value}()", SHAPE_OPS[func.attr.value]
        else:
            return updated
        if in_training_path(self.ctx.statements):
            self.flag(
                original,
                f"`{op}` returns as many elements as the data says: a new shape (and graph) for every "
                f"count, and XLA computes it on the CPU; {hint}; see {RECOMPILATION_DOC}",
            )
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if not any(isinstance(e.slice, cst.Index) and self._is_mask(e.slice.value) for e in original.slice):
            return updated
        if not in_training_path(self.ctx.statements):
            return updated
        if self._is_assigned(original):
            message = (
                f"`{snippet(original)} = ...` assigns through a boolean mask (guessed from the index): "
                "XLA computes the positions on the CPU at every step; write "
                "`x = x.masked_fill(mask, value)` or `x = torch.where(mask, value, x)`, which keep "
                "the work on the device"
            )
        else:
            message = (
                f"`{snippet(original)}` indexes with a boolean mask (guessed from the index): the result "
                "has as many elements as the mask is true, a new shape (and graph) for every count, "
                f"and XLA computes it on the CPU; {SELECT_HINT}"
            )
        self.flag(original, f"{message}; see {RECOMPILATION_DOC}")
        return updated

    def _is_mask(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return True
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self._is_mask(node.left) or self._is_mask(node.right)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return node.func.attr.value == "bool" and not node.args
        name = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
        return bool(MASK_NAME.search(name)) and not INDEX_NAME.search(name)

    def _is_assigned(self, node: cst.Subscript) -> bool:
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(t.target is node for t in small.targets):
                return True
            if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and small.target is node:
                return True
        return False


# Reads of a tensor's value: methods matched by shape, and torch functions.
VALUE_METHODS = {"item", "any", "all", "tolist", "is_nonzero"}
VALUE_FUNCTIONS = {
    "torch.any", "torch.all", "torch.equal", "torch.allclose", "torch.is_nonzero",
    "torch.isnan", "torch.isinf", "torch.isfinite", "torch.count_nonzero",
}


class TensorControlFlow(Rule):
    """Python ``if`` / ``while`` / ``assert`` / conditional expressions on tensor values
    are flagged in the training path.

    Guide, "Understanding Recompilations" (and "Understanding Lazy Execution"): to decide
    ``if loss.item() > x`` or ``while t.any()``, Python needs the value, so the pending
    graph is cut and run there and then (a host sync in the middle of the step), and
    each branch taken traces another graph. Report only: what to do depends on the
    code, usually keeping the choice on the device (``torch.where(cond, a, b)``,
    ``torch.clamp``) or checking the value every N steps after ``torch_xla.sync()``.

    A condition reads a tensor value when it calls ``.item()``, ``.any()``, ``.all()``,
    ``.tolist()`` or ``.is_nonzero()`` (methods matched by shape: NumPy arrays match too)
    or one of ``torch.any`` / ``all`` / ``equal`` / ``allclose`` / ``isnan`` / ``isinf`` /
    ``isfinite`` / ``count_nonzero`` / ``is_nonzero``. ``if loss < best`` on two tensors
    is not seen: nothing in the code says they are tensors. Only the training path is
    looked at (module docstring).
    """

    CODE = "XLA703"
    NAME = "tensor-control-flow"
    SUMMARY = "if/while/assert on tensor values (.item(), .any()) in the training path are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (
        rf"\.{GAP}{names_trigger(*VALUE_METHODS, *VALUE_FUNCTIONS)}{GAP}\(",  # x.item(), t.isnan()
        # torch's functions called by a name they were imported as (from torch import isnan)
        # (the import's names run to the line's end, or in parentheses to the closing one)
        r"from[\s\\]+torch[\s\\]+import[\s\\]*(?:\([^)]*?|(?:[^\n\\]|\\\n)*?)"
        + names_trigger(*VALUE_FUNCTIONS),
        rf"import[\s\\]+torch[\s\\]*\.[\s\\]*{names_trigger(*VALUE_FUNCTIONS)}",
    )
    REQUIRES = (TRAINING_PATH,)  # it flags only in the training path
    BEFORE = "for x in loader:\n    loss = model(x)\n    if loss.item() > 10:\n        break\n"
    AFTER = (
        "for x in loader:\n"
        "    loss = model(x)\n"
        "    # TODO(xla-migrate): XLA703 `if` on `loss.item()` reads a tensor value: the step's graph is "
        "cut and run there to get it (a host sync), and each branch traces another graph; keep the "
        "choice on the device (`torch.where(cond, a, b)`), or check it every N steps after "
        f"`torch_xla.sync()`; see {RECOMPILATION_DOC}\n"
        "    if loss.item() > 10:\n"
        "        break\n"
    )

    def leave_If(self, original: cst.If, updated: cst.If):
        self._check(original.test, "if")
        return updated

    def leave_While(self, original: cst.While, updated: cst.While):
        self._check(original.test, "while")
        return updated

    def leave_Assert(self, original: cst.Assert, updated: cst.Assert):
        self._check(original.test, "assert")
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        self._check(original.test, "... if ... else ...")
        return updated

    def _check(self, test: cst.BaseExpression, kind: str) -> None:
        read = find(test, self._reads_value)
        if read is None or not in_training_path(self.ctx.statements):
            return
        self.flag(
            read,
            f"`{kind}` on `{snippet(read)}` reads a tensor value: the step's graph is cut and run there "
            "to get it (a host sync), and each branch traces another graph; keep the choice on the "
            "device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; "
            f"see {RECOMPILATION_DOC}",
        )

    def _reads_value(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = self.qualname(node.func)
        if name is not None:
            return name in VALUE_FUNCTIONS
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in VALUE_METHODS


PAD_SEQUENCE = "torch.nn.utils.rnn.pad_sequence"
PAD_HINT = (
    "pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's "
    "`padding=\"max_length\", max_length=MAX_LEN`), or to a few bucket lengths"
)


class VariableLengthBatch(Rule):
    """Batches padded to their longest sequence are flagged: every new length is a new graph.

    Guide, "Understanding Recompilations": "Padding inputs to fixed sizes is a common
    strategy"; the recompilation document's first source of recompilations is the input
    data set. Flagged: ``torch.nn.utils.rnn.pad_sequence`` (it always pads to the
    longest sequence of the list), a call given ``padding=True`` or
    ``padding="longest"`` (a Hugging Face tokenizer or collator, matched by shape), and,
    in a function whose name says ``collate``, a ``max()`` over lengths (``max(len(s) for
    s in batch)``, ``max(lengths)``, ``lengths.max()``) that sizes the padding. Anywhere
    in the file: this code runs on the host, but it makes the shapes of the step. Report
    only: the fixed length is the user's choice.
    """

    CODE = "XLA704"
    NAME = "variable-length-batch"
    SUMMARY = "pad_sequence, padding='longest' and collate_fns padding to the longest are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (r"pad_sequence", r"""padding\s*=\s*(True|['"]longest)""", r"collate")
    BEFORE = (
        "from torch.nn.utils.rnn import pad_sequence\n"
        "def collate(batch):\n    return pad_sequence(batch, batch_first=True)\n"
    )
    AFTER = (
        "from torch.nn.utils.rnn import pad_sequence\n"
        "def collate(batch):\n"
        "    # TODO(xla-migrate): XLA704 `pad_sequence` pads to the longest sequence of each batch: "
        f"every new length is a new shape and compiles a new graph; {PAD_HINT}; see {RECOMPILATION_DOC}\n"
        "    return pad_sequence(batch, batch_first=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        message = None
        padding = call_arg(original, None, "padding")
        if self.qualname(original.func) == PAD_SEQUENCE:
            message = "`pad_sequence` pads to the longest sequence of each batch"
        elif padding is not None and (_is_literal(padding.value, "True") or string_value(padding.value) == "longest"):
            message = f"`padding={snippet(padding.value)}` pads to the longest sequence of each batch"
        elif self._is_longest_length(original):
            message = f"the collate function pads to `{snippet(original)}`, the longest sequence of the batch"
        if message is not None:
            self.flag(
                original,
                f"{message}: every new length is a new shape and compiles a new graph; {PAD_HINT}; "
                f"see {RECOMPILATION_DOC}",
            )
        return updated

    def _is_longest_length(self, call: cst.Call) -> bool:
        function = innermost_function(self.ctx.statements)
        if function is None or "collate" not in function.name.value.lower():
            return False
        func = call.func
        if isinstance(func, cst.Name) and func.value == "max" and func.value not in self.ctx.aliases:
            return any(_mentions_length(a.value) for a in call.args)
        if isinstance(func, cst.Attribute) and func.attr.value == "max" and not call.args:
            return _mentions_length(func.value)
        return False


def _mentions_length(node: cst.CSTNode) -> bool:
    """``len(s) for s in batch``, ``map(len, batch)``, ``lengths``, ``seq_lens``."""
    return find(node, lambda n: isinstance(n, cst.Name) and "len" in n.value.lower()) is not None


CONCATENATIONS = frozenset(
    f"torch.{name}" for name in ("cat", "concat", "concatenate", "hstack", "vstack", "row_stack", "column_stack", "dstack")
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
    TRIGGERS = (names_trigger(*CONCATENATIONS), r"\[[^\]\n]*:")
    REQUIRES = (TRAINING_PATH, r"(?m:^[ \t\f]*(?:async[ \t]+)?(?:for|while)\b)")  # a loop
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
            key is None or self.qualname(call.func) not in CONCATENATIONS or pieces is None
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
            f"`{key}` itself still grows" if crop else ""
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
                if isinstance(last, cst.Slice) and last.upper is None and isinstance(last.lower, cst.UnaryOperation) \
                        and isinstance(last.lower.operator, cst.Minus):
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
            isinstance(small, cst.Assign) and any(t.target is node for t in small.targets)
            or isinstance(small, (cst.AugAssign, cst.AnnAssign)) and small.target is node
            for small in statement.body
        )
