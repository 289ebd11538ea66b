"""XLA702: ops whose output shape depends on tensor values (``nonzero``, boolean
masks, ``unique``) are flagged in the training path (the migration guide's
"Understanding Recompilations")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.recompilation.common import (
    GRAPH_BREAKS_DOC,
    RECOMPILATION_DOC,
    TRAINING_PATH,
    CompiledOnly,
    in_training_path,
)
from migrate_xla.rule.api import GAP, ON_ACCELERATOR, Rule, call_arg, code_nodes, names_trigger, snippet

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
# what makes integer positions: an index tensor, whatever the name it is given
INDEX_CALLS = frozenset(
    {
        "torch.randperm",
        "torch.arange",
        "torch.argsort",
        "torch.randint",
        "torch.multinomial",
        "torch.LongTensor",
        "torch.cuda.LongTensor",
        "numpy.arange",
        "numpy.random.permutation",
        "numpy.random.choice",
    }
)
INDEX_METHODS = frozenset({"argsort", "argmax", "argmin", "long", "to", "cuda", "cpu", "flatten", "view", "reshape"})


class DataDependentShape(CompiledOnly, Rule):
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
    (``mask_idx``) and that the file does not give integer positions: a name assigned, or a
    parameter passed at each call of its function, a slice or element of ``torch.randperm``,
    ``torch.arange`` and the like, or a name with ``idx`` in it (``def train(mask_train)``
    called with ``idx_train = idx[1600:]`` of ``idx = torch.randperm(n)``: an integer index).
    Only the training path is looked at (module docstring).

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, whose graph breaks
    where a shape depends on the data (the family's docstring).
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
    REQUIRES = (ON_ACCELERATOR, TRAINING_PATH)  # it flags only in the training path
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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.module: cst.Module | None = None
        self.stores: dict[str, list[cst.BaseExpression]] = {}  # name -> the values the file gives it
        self.calls: dict[str, list[cst.Call]] = {}  # function name -> its calls
        self.learned = False  # whether stores and calls are learned (_learn_file)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        name = self.qualname(func)
        if name == "torch.where" and len(original.args) == 1:
            op, hint = "torch.where(cond)", SELECT_HINT
        elif name is not None and name.startswith("torch.") and name[len("torch.") :] in SHAPE_OPS:
            op, hint = name, SHAPE_OPS[name[len("torch.") :]]
        elif name is None and isinstance(func, cst.Attribute) and func.attr.value in SHAPE_OPS:
            op, hint = f".{func.attr.value}()", SHAPE_OPS[func.attr.value]
        else:
            return updated
        if not in_training_path(self.ctx.statements) or not self.matters():
            return updated
        if self.ctx.api.lazy:
            cost, doc = "a new shape (and graph) for every count, and XLA computes it on the CPU", RECOMPILATION_DOC
        else:
            cost = "`torch.compile` breaks the graph there (the count is known only once it runs), and what follows "
            cost, doc = cost + "has a new shape for every count", GRAPH_BREAKS_DOC
        self.flag(original, f"`{op}` returns as many elements as the data says: {cost}; {hint}; see {doc}")
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        # the training path first: a name's values (_holds_positions) are looked up in the whole file
        if not in_training_path(self.ctx.statements):
            return updated
        if not any(isinstance(e.slice, cst.Index) and self._is_mask(e.slice.value) for e in original.slice):
            return updated
        if not self.matters():
            return updated
        if not self.ctx.api.lazy:
            self.flag(original, self._compiled(original))
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

    def _compiled(self, original: cst.Subscript) -> str:
        """The finding under ``torch.compile`` (TorchTPU)."""
        if self._is_assigned(original):
            return (
                f"`{snippet(original)} = ...` assigns through a boolean mask (guessed from the index): its positions "
                "come from the data, which may break `torch.compile`'s graph; write `x = x.masked_fill(mask, value)` "
                f"or `x = torch.where(mask, value, x)`, which keep one graph; see {GRAPH_BREAKS_DOC}"
            )
        return (
            f"`{snippet(original)}` indexes with a boolean mask (guessed from the index): the result has as many "
            "elements as the mask is true, so `torch.compile` breaks the graph there and what follows has a new "
            f"shape for every count; {SELECT_HINT}; see {GRAPH_BREAKS_DOC}"
        )

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
        if not MASK_NAME.search(name) or INDEX_NAME.search(name):
            return False
        return not (isinstance(node, cst.Name) and self._holds_positions(node.value))

    # -- a name with mask in it that holds integer positions (``mask_train`` given ``idx[1600:]``
    # of ``idx = torch.randperm(n)``): an integer index, whose result has a fixed shape

    def _holds_positions(self, name: str) -> bool:
        """Every value the file gives ``name`` is integer positions: what it is assigned, or, for a
        parameter of the enclosing function, what each call of the function passes there."""
        function = next((s for s in reversed(self.ctx.statements) if isinstance(s, cst.FunctionDef)), None)
        params = [p.name.value for p in function.params.params] if function is not None else []
        if name in params:
            calls = self._learned(function.name.value, self.calls)
            passed = [call_arg(call, params.index(name), name) for call in calls]
            return bool(calls) and all(arg is not None and self._positions(arg.value, 0) for arg in passed)
        values = self._learned(name, self.stores)
        return bool(values) and all(self._positions(value, 0) for value in values)

    def _positions(self, node: cst.BaseExpression, depth: int) -> bool:
        """Whether ``node`` is integer positions: made by ``torch.randperm`` and the like, a slice
        or element of such, moved (``.to(device)``), or a name given only such (or named so)."""
        if depth > 8:
            return False
        if isinstance(node, cst.Name):
            if INDEX_NAME.search(node.value) and not MASK_NAME.search(node.value):
                return True
            values = self._learned(node.value, self.stores)
            return bool(values) and all(self._positions(value, depth + 1) for value in values)
        if isinstance(node, cst.Subscript):
            return self._positions(node.value, depth + 1)
        if isinstance(node, cst.Call):
            if self.qualname(node.func) in INDEX_CALLS:
                return True
            func = node.func
            return (
                isinstance(func, cst.Attribute)
                and func.attr.value in INDEX_METHODS
                and self._positions(func.value, depth + 1)
            )
        return False

    def _learned(self, name: str, table: dict[str, list]) -> list:
        """What the file assigns to ``name`` (``self.stores``) or its calls of ``name``
        (``self.calls``): anywhere in it, so in the whole file when a slice left out code that spells it."""
        self.ctx.need_whole_module(name)
        if not self.learned:
            self._learn_file()
        return table.get(name, [])

    def _learn_file(self) -> None:
        """The file's assignments to plain names (tuples element by element) and calls of names, once."""
        self.learned = True
        for node in code_nodes(self.module) if self.module is not None else ():
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    self._store(target.target, node.value)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                self.calls.setdefault(node.func.value, []).append(node)

    def _store(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.stores.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for index, element in enumerate(target.elements):
                if (
                    values is not None
                    and len(values) == len(target.elements)
                    and not isinstance(element, cst.StarredElement)
                ):
                    self._store(element.value, values[index].value)
                elif isinstance(element.value, cst.Name):  # unknown: not positions
                    self.stores.setdefault(element.value.value, []).append(cst.Name("None"))

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
