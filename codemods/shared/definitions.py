"""Functions and classes a fix writes into the migrated file (XLA901's ``xla_elu``, XLA802's
``XlaTimingEvent``): defined once, at the top level, where every use can see them."""

from __future__ import annotations

import libcst as cst

from codemods.shared.statements import is_docstring, is_import_line


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
