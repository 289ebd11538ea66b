"""XLA702: ops whose output shape depends on tensor values (``nonzero``, boolean
masks, ``unique``) are flagged in the training path (the migration guide's
"Understanding Recompilations")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.recompilation.common import RECOMPILATION_DOC, TRAINING_PATH, in_training_path
from migrate_xla.rule import GAP, ON_ACCELERATOR, Rule, names_trigger, snippet

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
