"""XLA703: Python control flow on tensor values (``if loss.item() > x``) is flagged in
the training path (the migration guide's "Understanding Recompilations")."""

from __future__ import annotations

import libcst as cst

from codemods.recompilation.common import (
    GRAPH_BREAKS_DOC,
    RECOMPILATION_DOC,
    TRAINING_PATH,
    CompiledOnly,
    in_training_path,
)
from migrate_xla.rule.api import GAP, ON_ACCELERATOR, Rule, find, names_trigger, snippet

# Reads of a tensor's value: methods matched by shape, and torch functions.
VALUE_METHODS = {"item", "any", "all", "tolist", "is_nonzero"}
VALUE_FUNCTIONS = {
    "torch.any",
    "torch.all",
    "torch.equal",
    "torch.allclose",
    "torch.is_nonzero",
    "torch.isnan",
    "torch.isinf",
    "torch.isfinite",
    "torch.count_nonzero",
}


class TensorControlFlow(CompiledOnly, Rule):
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

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, where reading the
    value breaks the compiled graph (the family's docstring).
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
        r"from[\s\\]+torch[\s\\]+import[\s\\]*(?:\([^)]*?|(?:[^\n\\]|\\\n)*?)" + names_trigger(*VALUE_FUNCTIONS),
        rf"import[\s\\]+torch[\s\\]*\.[\s\\]*{names_trigger(*VALUE_FUNCTIONS)}",
    )
    REQUIRES = (ON_ACCELERATOR, TRAINING_PATH)  # it flags only in the training path
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
        if read is None or not in_training_path(self.ctx.statements) or not self.matters():
            return
        if not self.ctx.api.lazy:
            self.flag(
                read,
                f"`{kind}` on `{snippet(read)}` reads a tensor value: `torch.compile` breaks the graph there to "
                "get it (a host sync), and each branch taken compiles a graph of its own; keep the choice on the "
                f"device (`torch.where(cond, a, b)`), or check it every N steps; see {GRAPH_BREAKS_DOC}",
            )
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
