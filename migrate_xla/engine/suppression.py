"""Suppression comments: ``# noqa: XLA201`` on a line, ``# xla-migrate: noqa: XLA201`` for a
file (docs/configuration.md, "Suppressing a finding").

A suppressed finding is neither fixed, nor reported, nor counted in the exit code; a run's
statistics count it. A line's comment covers the statement it ends: a simple statement
(any of its physical lines, for one that spans several) or the header of a compound
statement (``for x in loader:  # noqa: XLA302``), not the body below it. Codes are
matched as prefixes (``XLA2`` covers XLA201); a bare ``# noqa`` covers every code, as in
ruff and flake8. The CUDA reference a suppressed conversion leaves is not flagged again
on that statement (XLA899 would: the comment says a person has seen it). A code of this tool's in a comment that silenced nothing is reported as
XLA002 (codemods/suppression.py), as ruff's RUF100.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from migrate_xla.rule.api import CUDA_REFERENCE_LEFT, children, code_of, subtree

_CODES = r"(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]+)*)"
# a bare noqa comment, one with codes (noqa: XLA201, XLA302 or noqa:XLA2); not noqa-ish. Compiled by
# ``re`` when first used (its cache keeps them): only for a text ``may_suppress``.
LINE = rf"(?i)#\s*noqa(?::\s*{_CODES})?(?![\w-])"
FILE = rf"(?im)^[ \t]*#\s*xla-migrate:\s*noqa(?::\s*{_CODES})?\s*$"
# A text that may hold a suppression of this tool's codes (a bare noqa, one naming an XLA code, a
# file's comment): only then does the engine look for them, and parse the file whole. Other tools'
# codes alone (`noqa: F401`, in a quarter of torch's files) cost nothing.
ANY = re.compile(r"#\s*noqa(?!\s*:)|noqa\s*:[^\n]*XLA|xla-migrate:\s*noqa", re.IGNORECASE)


def may_suppress(text: str) -> bool:
    """Whether ``ANY`` occurs in ``text``. Each of its matches holds ``noqa`` in some case,
    and every character that ``re.IGNORECASE`` matches to one of its letters lowers to that
    letter: a text whose lowered form does not hold ``noqa`` (most files) is told without
    the search, which tries every position (an ignore-case pattern has no literal prefix to
    skip to)."""
    return "noqa" in text.lower() and ANY.search(text) is not None


ALL = None  # a comment without codes covers every code


def _codes(match: re.Match) -> tuple[str, ...] | None:
    codes = match.group("codes")
    return ALL if codes is None else tuple(c.upper() for c in re.split(r"[\s,]+", codes) if c)


def _covers(codes: tuple[str, ...] | None, code: str) -> str | None:
    """The entry of ``codes`` that covers ``code`` ("*" for a comment without codes)."""
    if codes is ALL:
        return "*"
    return next((c for c in codes if code.startswith(c)), None)


class Comment:
    """One suppression comment: the codes it names, and those that silenced something."""

    def __init__(self, codes: tuple[str, ...] | None, statement: cst.CSTNode | None, line: int = 0) -> None:
        self.codes = codes
        self.statement = statement  # the statement it ends; None for a file's comment
        self.line = line  # a file's comment: its line
        self.used: set[str] = set()

    def covers(self, code: str) -> bool:
        entry = _covers(self.codes, code)
        if entry is not None:
            self.used.add(entry)
        return entry is not None

    def unused(self) -> list[str]:
        """The codes of this tool's it names that silenced nothing."""
        return [c for c in self.codes or () if c not in self.used and c.startswith("XLA")]


class Suppressions:
    """The suppression comments of one file, found in its text (a file's) and its tree (a line's)."""

    def __init__(self, text: str) -> None:
        self.file = [Comment(_codes(m), None, text.count("\n", 0, m.start()) + 1) for m in re.finditer(FILE, text)]
        self.lines: list[Comment] = []
        self._covering: dict[int, Comment] = {}  # id of a node -> the line comment covering it
        self._left: set[int] = set()  # ids of the statements where a finding was silenced

    def learn(self, module: cst.Module) -> None:
        """Find the line comments of ``module``: every node a statement's comment covers."""
        for statement, header in _statement_lines(module):
            found = re.search(
                LINE, code_of(statement.with_changes(leading_lines=())) if header is None else _header(statement)
            )
            if found is None:
                continue
            comment = Comment(_codes(found), statement)
            self.lines.append(comment)
            self._covering[id(statement)] = comment
            for part in [statement] if header is None else header:
                for node in subtree(part):
                    self._covering[id(node)] = comment

    def silences(self, code: str, *nodes: cst.CSTNode | None) -> bool:
        """Whether a comment covers ``code`` at the first of ``nodes`` (original nodes) that a
        line comment covers, or in the whole file."""
        comment = next((self._covering[id(n)] for n in nodes if id(n) in self._covering), None)
        if comment is not None and comment.covers(code):
            return True
        if code == CUDA_REFERENCE_LEFT and any(id(n) in self._left for n in nodes):
            return True  # the CUDA code a suppressed conversion left is not flagged again there
        return any([c.covers(code) for c in self.file])  # each marks what it covered

    def silenced_at(self, statement: cst.CSTNode | None) -> None:
        """A finding was silenced in ``statement``: the CUDA code it left there is not flagged."""
        if statement is not None:
            self._left.add(id(statement))

    def comments(self) -> list[Comment]:
        return [*self.file, *self.lines]


def _statement_lines(module: cst.Module) -> Iterator[tuple[cst.CSTNode, list[cst.CSTNode] | None]]:
    """Each statement with what its own lines hold: None for a simple statement (all of
    it), the header's parts for a compound statement (its children but its blocks)."""
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield node, None
            continue
        if isinstance(node, cst.BaseCompoundStatement):
            blocks = _blocks(node)
            inside = {id(block) for block in blocks}
            yield node, [c for c in children(node) if id(c) not in inside]
            stack.extend(reversed(blocks))
            continue
        stack.extend(reversed(children(node)))


def _blocks(node: cst.BaseCompoundStatement) -> list[cst.CSTNode]:
    """What follows a compound statement's header: its body, else, handlers, finally."""
    found = [node.body]
    for name in ("orelse", "handlers", "finalbody", "cases"):
        value = getattr(node, name, None)
        if isinstance(value, (tuple, list)):
            found.extend(value)
        elif value is not None:
            found.append(value)
    return found


def _header(statement: cst.BaseCompoundStatement) -> str:
    """The comment that ends a compound statement's header line (``if x:  # noqa``)."""
    body = statement.body
    whitespace = body.header if isinstance(body, cst.IndentedBlock) else getattr(body, "trailing_whitespace", None)
    comment = getattr(whitespace, "comment", None)
    return comment.value if comment is not None else ""
