"""What the XLA9xx rules share: where the measured defects are written down."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule.api import FileContext, Rule

DEFECTS_DOC = "xla-migrate's docs/runtime_defects.md"


class RenamesReferences(Rule):
    """A rule that renames the references to what it replaces (calls, and the name passed on):
    the names in import statements are not references, so it counts how deep it is in one."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.in_import = 0

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        self.in_import -= 1
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        self.in_import -= 1
        return updated
