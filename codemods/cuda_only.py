"""XLA8xx: CUDA-only code with no automatic XLA rewrite is flagged, never kept silently.

The migration guide's "Unsupported Operations" and "Debugging and Profiling": what
only exists on NVIDIA GPUs must be replaced by a person. These rules say where.
"""

from __future__ import annotations

import libcst as cst

from codemods.devices import code_of, is_cuda_literal
from migrate_xla.rule import Rule

CUDA_MODULES = ("torch.cuda", "torch.backends.cudnn", "torch.backends.cuda")
_BLOCKS = (cst.BaseSuite, cst.BaseStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)


class CudaReferenceLeft(Rule):
    """A CUDA reference that no rule converted is flagged on its statement.

    Runs after every other rule (it has the highest code) and looks at the migrated
    statement: a ``torch.cuda`` / ``torch.backends.cudnn`` name, a ``.cuda()`` call or a
    ``"cuda"`` device string still there would crash or silently mean the CPU on a
    TPU VM, so a person has to migrate it. Imports are not flagged: they are removed
    when the code no longer uses them.
    """

    CODE = "XLA899"
    NAME = "cuda-reference-left"
    SUMMARY = "CUDA references no rule could convert are flagged for a person"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (r"cuda",)
    BEFORE = "stream = torch.cuda.Stream()\n"
    AFTER = (
        "# TODO(xla-migrate): XLA899 `torch.cuda.Stream` has no automatic XLA rewrite; "
        "see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html\n"
        "stream = torch.cuda.Stream()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.suspects: set[int] = set()  # statements whose original code mentions CUDA

    def _suspect(self) -> None:
        if self.ctx.statements:
            self.suspects.add(id(self.ctx.statements[-1]))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "cuda" or (self.ctx.aliases.get(node.value) or "").startswith(CUDA_MODULES):
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
            self.flag(
                original,
                f"`{code_of(left)}` has no automatic XLA rewrite; see "
                "https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html",
            )
        return updated

    def _find(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The first CUDA reference in ``node``, not looking into nested statements."""
        if isinstance(node, (cst.Attribute, cst.Name)):
            if (self.qualname(node) or "").startswith(CUDA_MODULES):
                return node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            return node
        if isinstance(node, (cst.SimpleString, cst.FormattedString)) and is_cuda_literal(node):
            return node
        for child in node.children:
            found = None if isinstance(child, _BLOCKS) else self._find(child)
            if found is not None:
                return found
        return None
