"""Functions and classes a fix writes into the migrated file (XLA901's ``xla_elu``, XLA802's
``XlaTimingEvent``): defined once, at the top level, where every use can see them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from codemods.shared.statements import is_docstring, is_import_line
from migrate_xla.rule.api import FileContext


class Written:
    """What a rule writes into the file, by name: its code (``sources``, in the order they are
    written) and the written names that code calls (``calls``). A fix notes each name it uses
    (``use``, which also notes the top-level statement of the first use); at the module's end
    ``write`` adds, once and above that statement, those the file does not define yet, the
    whole file parsed where a slice may have left their definitions out."""

    def __init__(
        self, ctx: FileContext, sources: Mapping[str, str], calls: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.ctx, self.sources, self.calls = ctx, sources, calls or {}
        self.used: dict[str, None] = {}
        self.first_use: cst.CSTNode | None = None

    def use(self, name: str) -> None:
        for used in (name, *self.calls.get(name, ())):
            self.used[used] = None
        if self.first_use is None and self.ctx.statements:
            self.first_use = self.ctx.statements[0]

    def write(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        defined = {s.name.value for s in original.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        wanted = [name for name in self.sources if name in self.used and name not in defined]
        if self.first_use is None or not wanted:
            return updated
        self.ctx.need_whole_module(*wanted, defined=True)
        return with_definitions(original, updated, [self.sources[name] for name in wanted], self.first_use)


def with_definitions(
    original: cst.Module, updated: cst.Module, sources: list[str], first_use: cst.CSTNode | None
) -> cst.Module:
    """``updated`` with the definitions ``sources`` (code, one definition each) after the last
    import line above the top-level statement ``first_use`` (of ``original``) that first uses
    them: a module-level use runs after the definitions, a use in a function whenever it
    runs. With no import there, after the module's docstring."""
    if not sources:
        return updated
    index = next((i for i, s in enumerate(original.body) if s is first_use), len(original.body))
    anchors = [s for s in original.body[:index] if is_import_line(s)]
    body = list(updated.body)
    at = next((i + 1 for i, s in enumerate(body) if anchors and s is anchors[-1]), 0)
    if not anchors:
        while at < len(body) and is_docstring(body[at]):
            at += 1
    definitions = [
        cst.parse_statement(source.lstrip("\n")).with_changes(leading_lines=[cst.EmptyLine()] * 2) for source in sources
    ]
    if at < len(body):
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()] * 2 + _blank_free(body[at].leading_lines))
    body[at:at] = definitions
    return updated.with_changes(body=body)


def _blank_free(lines) -> list:
    """Leading lines without the blank ones before the first comment."""
    lines = list(lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return lines
