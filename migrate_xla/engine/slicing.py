"""Parse only the parts of a big file that the woken rules may act on.

Most of a big file that wakes a rule is code no rule touches: torch's
``_tensor.py`` wakes the ``cuda`` rules with a few methods out of hundreds. Parsing
with LibCST is the engine's biggest cost, so the engine parses a *slice*: the file
with every top-level statement (and, inside a class, every member) that none of the
woken rules' patterns occurs in replaced by one placeholder line. The rules run on
the slice; the placeholders are then replaced by the text they stood for.

What makes this exact:
- A unit is kept when a woken rule's TRIGGERS or CONTEXT patterns occur in its text,
  or a local name bound by an import whose text they occur in (``from torch.cuda
  import Stream as S`` keeps the units that use ``S``), or it is an import.
- The imports inside a skipped unit are learned when its placeholder is visited, in
  the same order as in the whole file (``FileContext.learn_names``).
- Comment ownership is kept: the blank and comment lines before a skipped unit stay
  in the slice (they are the next statement's ``leading_lines`` in LibCST), and a
  compound statement's trailing comments that LibCST gives to its block (those indented
  deeper than the statement, up to the last one) go with it.
- A rule whose analysis needs the whole module says so (``Rule.WHOLE_MODULE``, or
  ``FileContext.need_whole_module()`` while running, or ``need_whole_module(name)``
  when the code left out spells ``name``); the engine then parses the whole file. So
  does anything unexpected here: no slice is better than a wrong one.

The slice is found with ``ast`` (about a tenth of a LibCST parse) and plain text.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from migrate_xla.rule.api import WholeModuleNeeded, words

PLACEHOLDER = "__xla_migrate_skipped_{}__"
_PLACEHOLDER = re.compile(r"__xla_migrate_skipped_(\d+)__")
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)" + _PLACEHOLDER.pattern + r"(?:\r\n|\n|\Z)", re.MULTILINE)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# Where an import statement may start: a line, or after ``if x:`` or ``;``.
_IMPORT_START = re.compile(r"(?:^|[:;])[ \t]*(?:from|import)[ \t\\]", re.MULTILINE)
_IMPORT_STATEMENT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<module>[\w.]+)[ \t]+import[ \t]+(?P<from_names>\([^)]*\)|[^\n;#]*)|import[ \t]+(?P<names>[^\n;#]*))",
    re.MULTILINE,
)
_COMMENT = re.compile(r"#[^\n]*")
# The names ast keeps as strings that LibCST keeps as Name nodes (other than attributes).
_NAME_FIELDS = {
    ast.FunctionDef: ("name",),
    ast.AsyncFunctionDef: ("name",),
    ast.ClassDef: ("name",),
    ast.arg: ("arg",),
    ast.keyword: ("arg",),
    ast.Global: ("names",),
    ast.Nonlocal: ("names",),
    ast.ExceptHandler: ("name",),
    ast.MatchAs: ("name",),
    ast.MatchStar: ("name",),
    ast.MatchMapping: ("rest",),
    ast.MatchClass: ("kwd_attrs",),
}
_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    getattr(ast, "TryStar", ast.Try),
    ast.Match,
)


@dataclass
class Skipped:
    """One placeholder line of a slice: the original text it stands for (its statements,
    whole lines), and the imports that text makes, as ``(module or None, [(name, asname),
    ...])`` in order."""

    text: str
    indent: str
    line: int  # the placeholder's line in the slice
    extra_lines: int  # the lines of ``text`` beyond the placeholder's one
    imports: list[tuple[str | None, list[tuple[str, str | None]]]]
    statements: list[ast.stmt]


@dataclass
class Slice:
    text: str
    skipped: list[Skipped] = field(default_factory=list)
    # for line(): each placeholder's line, and the extra lines of the placeholders before the nth
    _lines: list[int] = field(default_factory=list, repr=False, compare=False)
    _extra: list[int] = field(default_factory=list, repr=False, compare=False)

    def splice(self, code: str) -> str:
        """The whole file's code for the slice's migrated ``code``; WholeModuleNeeded when
        a placeholder line did not come through unchanged, exactly once, in order."""
        seen: list[int] = []

        def restore(match: re.Match) -> str:
            index = int(match.group(2))
            if match.group(1) != self.skipped[index].indent:
                raise WholeModuleNeeded  # a rule moved it into another block
            seen.append(index)
            return self.skipped[index].text

        whole = _PLACEHOLDER_LINE.sub(restore, code)
        if seen != list(range(len(self.skipped))):
            raise WholeModuleNeeded
        return whole

    def left_out(self) -> str:
        """The text of the units the slice left out, in order."""
        return "".join(skipped.text for skipped in self.skipped)

    def name_uses(self) -> Counter:
        """How often each name is used in the skipped units, as imports.apply_imports
        counts them in a tree: as a name, not an ``.attribute``, outside imports."""
        uses: Counter = Counter()
        stack: list[ast.AST] = [s for skipped in self.skipped for s in skipped.statements]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                uses[node.id] += 1
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                continue
            for attribute in _NAME_FIELDS.get(kind, ()):
                value = getattr(node, attribute)
                for name in [value] if isinstance(value, str) else value or ():
                    uses[name] += 1
            stack.extend(ast.iter_child_nodes(node))
        return uses

    def line(self, line: int) -> int:
        """The file's line for a line of the slice: by bisection, as every finding asks."""
        if len(self._lines) != len(self.skipped):
            self._lines = [s.line for s in self.skipped]  # increasing: placeholders in code order
            self._extra = [0, *accumulate(s.extra_lines for s in self.skipped)]
        return line + self._extra[bisect_left(self._lines, line)]

    @staticmethod
    def placeholder_index(name: str) -> int | None:
        match = _PLACEHOLDER.fullmatch(name)
        return int(match.group(1)) if match else None


def slice_text(text: str, keep: Sequence[re.Pattern[str]]) -> Slice | None:
    """The slice of ``text`` that keeps the units where a pattern of ``keep`` occurs, or
    None when it would keep them all (or ``text`` is not one ``ast`` can read). A slice that
    leaves out little still pays: ``ast.parse`` has been paid by then, and a slice costs no
    more to run than the whole file."""
    if "\0" in text or "\f" in text or text.count("\r") != text.count("\r\n"):
        return None  # line breaks that ast and this module might count differently
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = _LINE.findall(text)
    try:
        builder = _Builder(text, lines, [*keep, *_alias_patterns(text, keep)])
        builder.body(tree.body, "", len(lines))
    except _NoSlice:
        return None
    if not builder.cuts:
        return None
    return builder.slice()


class _NoSlice(Exception):
    pass


class _Builder:
    def __init__(self, text: str, lines: list[str], keep: Sequence[re.Pattern[str]]) -> None:
        self.text = text
        self.lines = lines
        self.offsets = [0, *accumulate(map(len, lines))]  # where each line starts in text
        self.keep = keep
        self.cuts: list[tuple[int, int, str]] = []  # (first line, end line, indent), 0-based, end exclusive
        self.statements: list[list[ast.stmt]] = []  # the statements of each cut

    def body(self, statements: list[ast.stmt], indent: str, block_end: int) -> None:
        """Choose the units of one block: ``statements`` at ``indent``, the block's lines ending at ``block_end``."""
        units = _units(statements)
        run: list = []  # first and end line of the run of skipped units being built, and its statements
        for index, unit in enumerate(units):
            first = _first_line(unit[0]) - 1
            next_first = _first_line(units[index + 1][0]) - 1 if index + 1 < len(units) else block_end
            end = self._end(unit[-1], indent, next_first)
            docstring = index == 0 and not indent and _is_docstring(unit[0])
            if docstring or self._needed(unit, first, end):
                if run:
                    self._cut(*run, indent)
                    run = []
                if len(unit) == 1 and isinstance(unit[0], ast.ClassDef):
                    self._class(unit[0], end)
                continue
            line = self.lines[first]
            if not line.startswith(indent) or line[len(indent) :][:1] in (" ", "\t"):
                raise _NoSlice  # indentation that is not the block's
            run = [run[0], end, run[2] + unit] if run else [first, end, unit]
        if run:
            self._cut(*run, indent)

    def _class(self, node: ast.ClassDef, end: int) -> None:
        """Slice a kept class's members too, when its body is an indented block."""
        if not _ends_in_block(node, self.lines):
            return
        line = self.lines[node.body[0].lineno - 1]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if indent:
            self.body(node.body, indent, end)

    def _needed(self, unit: list[ast.stmt], first: int, end: int) -> bool:
        """Whether the unit in lines [first, end) is kept: an import, or a pattern occurs in it."""
        if any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in unit):
            return True  # imports (and a notebook's commands among them) place the imports a fix adds
        start, stop = self.offsets[first], self.offsets[end]
        return self.text.find("get_ipython", start, stop) >= 0 or any(
            pattern.search(self.text, start, stop) for pattern in self.keep
        )

    def _end(self, last: ast.stmt, indent: str, next_first: int) -> int:
        """Where a unit's text ends (0-based, exclusive): its last line, or the last
        comment after it that LibCST gives to its block (indented deeper than the unit)."""
        end = last.end_lineno
        if isinstance(last, _COMPOUND) and _ends_in_block(last, self.lines):
            for number in range(end, next_first):
                line = self.lines[number]
                stripped = line.lstrip(" \t")
                if stripped.startswith("#") and len(line) - len(stripped) > len(indent):
                    end = number + 1
        return end

    def _cut(self, first: int, end: int, statements: list[ast.stmt], indent: str) -> None:
        self.cuts.append((first, end, indent))
        self.statements.append(statements)

    def slice(self) -> Slice:
        parts: list[str] = []
        result = Slice("")
        line = 0  # lines of the slice so far
        done = 0
        for index, (first, end, indent) in enumerate(self.cuts):
            parts.extend(self.lines[done:first])
            line += first - done
            last = self.lines[end - 1]
            newline = last[len(last.rstrip("\r\n")) :]
            parts.append(indent + PLACEHOLDER.format(index) + newline)
            line += 1
            text = "".join(self.lines[first:end])
            statements = self.statements[index]
            imports = _imports(statements) if _IMPORT_START.search(text) else []
            result.skipped.append(Skipped(text, indent, line, end - first - 1, imports, statements))
            done = end
        parts.extend(self.lines[done:])
        result.text = "".join(parts)
        return result


def _imports(statements: list[ast.stmt]) -> list[tuple[str | None, list[tuple[str, str | None]]]]:
    """The imports made in ``statements``, in code order, as FileContext.learn_names takes them."""
    found = [node for node in _statements_in(statements) if isinstance(node, (ast.Import, ast.ImportFrom))]
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    out: list[tuple[str | None, list[tuple[str, str | None]]]] = []
    for node in found:
        if isinstance(node, ast.Import):
            out.append((None, [(alias.name, alias.asname) for alias in node.names]))
        elif not node.level and node.module is not None and node.names[0].name != "*":
            out.append((node.module, [(alias.name, alias.asname) for alias in node.names]))
    return out


def _statements_in(statements: list[ast.stmt]):
    """``statements`` and every statement in their blocks, at any depth (not the expressions,
    where no statement is)."""
    stack = list(statements)
    while stack:
        statement = stack.pop()
        yield statement
        for name in _BLOCKS.get(type(statement), ()):
            for inner in getattr(statement, name):
                stack.extend(inner.body if isinstance(inner, (ast.excepthandler, ast.match_case)) else [inner])


# The fields of a compound statement that hold statements (a handler's or case's in its body)
_BLOCKS = {
    kind: tuple(name for name in ("body", "orelse", "finalbody", "handlers", "cases") if name in kind._fields)
    for kind in _COMPOUND
}


def _units(statements: list[ast.stmt]) -> list[list[ast.stmt]]:
    """Statements grouped so that no two groups share a line (``a = 1; b = 2``)."""
    units: list[list[ast.stmt]] = []
    for statement in statements:
        if units and _first_line(statement) <= units[-1][-1].end_lineno:
            units[-1].append(statement)
        else:
            units.append([statement])
    return units


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", ())
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _last_suite(statement: ast.stmt) -> list[ast.stmt]:
    if isinstance(statement, ast.Match):
        return statement.cases[-1].body
    if isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return (
            statement.finalbody
            or statement.orelse
            or (statement.handlers and statement.handlers[-1].body)
            or statement.body
        )
    return getattr(statement, "orelse", None) or statement.body


def _ends_in_block(statement: ast.stmt, lines: list[str]) -> bool:
    """Whether the statement's last suite is an indented block (``if x: y`` is not)."""
    suite = _last_suite(statement)
    first = suite[0]
    before = lines[first.lineno - 1].encode("utf-8")[: first.col_offset]
    return not before.strip()


def _alias_patterns(text: str, keep: Sequence[re.Pattern[str]]) -> list[re.Pattern[str]]:
    """Words for the local names bound by imports that a pattern of ``keep`` occurs in,
    one imported name at a time: ``from torch.cuda import Stream as S, foo`` gives ``S``
    (``from torch.cuda import Stream`` names ``cuda``), and ``foo`` only if its own
    ``from torch.cuda import foo`` does."""
    names: set[str] = set()
    for match in _IMPORT_STATEMENT.finditer(text):
        statement = match.group(0)
        if not any(pattern.search(statement) for pattern in keep):
            continue
        if statement.rstrip().endswith("\\") or "*" in statement:
            raise _NoSlice  # names it binds that this cannot read
        module = match.group("module")
        listed = _COMMENT.sub("", match.group("from_names") if module else match.group("names"))
        for item in listed.strip("() \t\r\n").split(","):
            parts = item.split()
            if not parts:
                continue
            single = f"from {module} import {parts[0]}" if module else f"import {parts[0]}"
            if not any(pattern.search(single) for pattern in keep):
                continue
            if len(parts) == 3 and parts[1] == "as":
                names.add(parts[2])
            elif len(parts) == 1 and module:
                names.add(parts[0])
            elif len(parts) != 1:
                raise _NoSlice
    return [re.compile(words(*sorted(names)))] if names else []
