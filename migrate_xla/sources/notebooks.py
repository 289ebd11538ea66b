"""Jupyter notebooks as one program: the code cells in, the migrated cells back into the JSON.

A notebook's cells run in one namespace (an import in cell 1 serves cell 5), so they
are migrated together: the program the engine sees is the code cells, each after a
marker comment naming its cell and a blank line, and the migrated program is split at
the markers again. The blank line keeps the marker when a fix removes the cell's first
statements: the comment lines directly above a removed statement go with it, a comment
with a blank line under it stays (docs/decisions.md), so a cell the migration empties
stays a cell, empty or with what is left. IPython syntax that is not Python (``%matplotlib inline``, ``!nvidia-smi``,
``x = !ls``, ``obj?``, a ``%%time`` first line) stands in the program as the call
IPython itself makes for it (``get_ipython().system('nvidia-smi')``), so the rules
see what it does, tagged to be put back as written. A cell that still is not Python
(``%%bash``, a syntax error) is kept out of the program and left as it is.

Writing replaces, in the JSON text as read, only the ``source`` values of the cells
that changed, and in them only the lines that changed: indentation, key order,
escapes, outputs, metadata and cell ids stay byte for byte. (nbformat's writer would
sort the keys and re-indent the whole file with one space, so a notebook written with
two or four rewrote every line; the standard ``json`` module is all this needs.)
"""

from __future__ import annotations

import ast
import bisect
import codecs
import io
import json
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migrate_xla.rule.findings import CELL_NOT_MIGRATED, Diagnostic
from migrate_xla.sources.source import Source, SourceError, Unit

_MARKER = "# <xla-migrate cell {}>\n\n"
# A marker may lose its blank line: a section comment above a removed import keeps its
# place but not the blank line under it (migrate_xla/engine/imports.py), and a cell marker is one.
_MARKER_LINE = re.compile(r"^# <xla-migrate cell (\d+)>\n\n?", re.M)
_TAG = "# <xla-migrate ipython {}>"
_TAGGED = re.compile(r"# <xla-migrate ipython \d+>$")
_PASS_LINE = re.compile(r"^pass$", re.M)
_LINE_BREAK = re.compile(r"\r\n?|\n")  # where LibCST's positions count lines

# Cell magics whose body is Python run in the kernel: the body is migrated.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit"})
# Cell magics whose body is another language: left alone, like a markdown cell.
OTHER_LANGUAGE_CELL_MAGICS = frozenset(
    {"bash", "sh", "sx", "system", "html", "javascript", "js", "latex", "markdown", "svg", "perl", "ruby"}
)


@dataclass(frozen=True)
class CodeCell:
    number: int  # its place among all the notebook's cells, from 1
    source: str  # the code as stored
    program: str | None  # the code as the engine sees it; None when the cell is left out
    ipython: tuple[tuple[str, str], ...] = ()  # (stand-in, original) for each IPython line
    skipped: Diagnostic | None = None  # why a cell is left out, when a person should know


class Notebook(Source):
    """A .ipynb file: ``text`` is its code cells as one program (see the module docstring)."""

    __slots__ = ("document", "cells")

    def __init__(
        self, path: Path, text: str, encoding: str, mode: int, mtime_ns: int, document: str, cells: tuple[CodeCell, ...]
    ) -> None:
        super().__init__(path, text, encoding, mode, mtime_ns)
        self.document = document  # the JSON text as read
        self.cells = cells

    def units(self, text: str) -> list[Unit]:
        if text == self.text:
            return [Unit(cell.number, cell.source) for cell in self.cells]
        parts = _MARKER_LINE.split(text)
        numbers = [int(n) for n in parts[1::2]]
        if parts[0] or numbers != [cell.number for cell in self.cells if cell.program is not None]:
            raise SourceError(
                "internal error: the cells of the migrated notebook could not be told apart; "
                "the file was left unchanged, please report this"
            )
        migrated = dict(zip(numbers, parts[2::2]))
        units = []
        for cell in self.cells:
            code = migrated.get(cell.number, cell.source)
            if cell.program is not None:
                if cell.number == numbers[-1]:
                    code = _without_added_pass(code, cell.program)
                if not cell.source.endswith("\n"):
                    code = code.removesuffix("\n")  # the newline the program put before the next marker
                for stand_in, original in cell.ipython:
                    if code.count(stand_in) != 1:
                        raise SourceError(
                            f"internal error: an IPython line of cell {cell.number} was changed; "
                            "the file was left unchanged, please report this"
                        )
                    code = code.replace(stand_in, original)
            units.append(Unit(cell.number, code))
        return units

    def locate(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        lines = _LINE_BREAK.split(self.text)
        starts, numbers = [], []  # the program line where each cell's code starts
        for index, line in enumerate(lines):
            match = _MARKER_LINE.match(line + "\n\n")
            if match:
                starts.append(index + 3)  # below the marker and its blank line
                numbers.append(int(match.group(1)))
        located = [cell.skipped for cell in self.cells if cell.skipped is not None]
        for d in diagnostics:
            at = max(bisect.bisect_right(starts, d.line) - 1, 0)
            column = d.column
            text = lines[d.line - 1] if 0 < d.line <= len(lines) else ""
            if _TAGGED.search(text):  # a stand-in: the finding is about the IPython line as a whole
                column = len(text) - len(text.lstrip()) + 1
            located.append(d._replace(cell=numbers[at], line=max(d.line - starts[at] + 1, 1), column=column))
        return sorted(located, key=lambda d: (d.cell, d.line, d.column, d.code, d.message))

    def file_lines(self, text: str) -> Callable[[int | None, int], int]:
        """The line of the JSON file that holds a cell's line (where annotations and SARIF point)."""
        document = self.document if text == self.text else self.encode(text).decode(self.encoding)
        lines = _source_lines(document)

        def file_line(cell: int | None, line: int) -> int:
            rows = lines.get(cell) or [1]
            return rows[min(line, len(rows)) - 1]

        return file_line

    def encode(self, text: str) -> bytes:
        changed = {unit.cell: unit.text for unit, cell in zip(self.units(text), self.cells) if unit.text != cell.source}
        return (_with_sources(self.document, changed) if changed else self.document).encode(self.encoding)


def read_notebook(path: Path, data: bytes, mode: int, mtime_ns: int) -> Notebook:
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        document = data.decode(encoding)
        notebook = json.loads(document)
    except UnicodeDecodeError as exc:
        raise SourceError(f"not a notebook: cannot decode as UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise SourceError(f"not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    cells = _cells_of(notebook)
    code_cells = (
        tuple(
            _code_cell(number, _text(cell["source"]))
            for number, cell in enumerate(cells, 1)
            if cell["cell_type"] == "code"
        )
        if _is_python(notebook)
        else ()
    )
    code_cells = _future_imports_stood_in(code_cells)
    program = "".join(
        _MARKER.format(cell.number) + cell.program + ("\n" if cell.program and not cell.program.endswith("\n") else "")
        for cell in code_cells
        if cell.program is not None
    )
    return Notebook(path, program, encoding, mode, mtime_ns, document, code_cells)


def _future_imports_stood_in(cells: tuple[CodeCell, ...]) -> tuple[CodeCell, ...]:
    """The cells, with each ``from __future__`` import after the first cell that has code
    replaced by a tagged ``__import__("__future__")``: IPython compiles each cell on its
    own, where such an import at the top of a cell is valid, but in the one program a
    future import must come first (no rule reads one)."""
    out, started = [], False
    for cell in cells:
        if cell.program is not None and started and _FUTURE.search(cell.program):
            cell = _future_stood_in(cell)
        started = started or (cell.program is not None and bool(cell.program.strip()))
        out.append(cell)
    return tuple(out)


def _future_stood_in(cell: CodeCell) -> CodeCell:
    ipython = list(cell.ipython)

    def stand_in(match: re.Match) -> str:
        ipython.append((f'__import__("__future__")  {_TAG.format(len(ipython))}', match.group()))
        return ipython[-1][0]

    program = _FUTURE.sub(stand_in, cell.program)
    return CodeCell(cell.number, cell.source, program, tuple(ipython))


_FUTURE = re.compile(r"^from[ \t]+__future__[ \t]+import[ \t]+[\w ,\t()]+$", re.M)


def _without_added_pass(code: str, program: str) -> str:
    """The last cell's migrated ``code`` without the ``pass`` the engine ends a program with
    when it removed the program's last statements below a comment (the cell's marker at
    least): a module needs none, and the cell was not written with it."""
    if code.endswith("pass\n") and len(_PASS_LINE.findall(code)) > len(_PASS_LINE.findall(program)):
        return code.removesuffix("pass\n")
    return code


def _cells_of(notebook: object) -> list[dict]:
    """The notebook's cells, checked to be nbformat 4 cells with a source."""
    if not isinstance(notebook, dict) or "cells" not in notebook:
        if isinstance(notebook, dict) and notebook.get("nbformat", 4) < 4:
            raise SourceError(
                f"nbformat {notebook['nbformat']} notebook: upgrade it with "
                "`jupyter nbconvert --to notebook --inplace` first"
            )
        raise SourceError("not a notebook: no list of cells")
    cells = notebook["cells"]
    if not isinstance(cells, list):
        raise SourceError("not a notebook: no list of cells")
    for number, cell in enumerate(cells, 1):
        if not (
            isinstance(cell, dict)
            and isinstance(cell.get("cell_type"), str)
            and (
                isinstance(cell.get("source"), str)
                or (isinstance(cell.get("source"), list) and all(isinstance(line, str) for line in cell["source"]))
            )
        ):
            raise SourceError(f"not a notebook: cell {number} has no cell_type or no source text")
    return cells


def _is_python(notebook: dict) -> bool:
    """Whether the code cells are Python (an R or Julia kernel's are not)."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key, {}).get(field) if isinstance(metadata.get(key), dict) else None
        if isinstance(value, str):
            return "python" in value.lower()
    return True


def _text(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


# -- IPython lines ---------------------------------------------------------------------

_CELL_MAGIC = re.compile(r"%%(\w+)[ \t]*(.*)")
_LINE_MAGIC = re.compile(r"%(\w+)[ \t]*(.*)", re.S)
_ASSIGNED = re.compile(r"([^=!%#'\"]+?)[ \t]*=[ \t]*(?=[!%])")  # `x = !ls`, `x = %who_ls`
_HELP = re.compile(r"\?{1,2}[\w.]+|[\w.]+\?{1,2}")


def _code_cell(number: int, source: str) -> CodeCell:
    """The cell as the program holds it: as written, with IPython lines replaced, or left out."""
    first = source.lstrip("\r\n")
    magic = _CELL_MAGIC.match(first)
    if magic and magic.group(1) in OTHER_LANGUAGE_CELL_MAGICS:
        return CodeCell(number, source, None)
    if magic and magic.group(1) not in PYTHON_CELL_MAGICS:
        reason = f"`%%{magic.group(1)}` does not run its body as Python code in the notebook"
        return _left_out(number, source, 1, 1, f"{reason}; migrate what it runs by hand")
    error = _syntax_error(source)
    if error is None:
        return CodeCell(number, source, source)
    program, ipython = _stand_ins(source)
    if ipython and _syntax_error(program) is None:
        return CodeCell(number, source, program, tuple(ipython))
    line, column, message = error if not ipython else _syntax_error(program)
    return _left_out(number, source, line, column, f"{message} (a syntax error); fix the cell and run again")


def _left_out(number: int, source: str, line: int, column: int, reason: str) -> CodeCell:
    finding = Diagnostic(
        code=CELL_NOT_MIGRATED,
        message=f"cell not migrated: {reason}",
        line=line,
        column=column,
        severity="warning",
        fixed=False,
        cell=number,
    )
    return CodeCell(number, source, None, skipped=finding)


def _syntax_error(code: str) -> tuple[int, int, str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes are the engine's business, not a reason to skip
            compile(code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.offset or 1, exc.msg
    except ValueError as exc:  # null bytes, before Python 3.11.4
        return 1, 1, str(exc)
    return None


def _stand_ins(source: str) -> tuple[str, list[tuple[str, str]]]:
    """``source`` with each IPython line replaced by the call IPython makes for it, tagged.

    A line continued with a backslash is one command; its stand-in keeps the line
    count (the tag again on the extra lines), so positions in the cell stay right.
    """
    lines = io.StringIO(source, newline="").readlines()  # the lines Python counts (not at form feeds)
    out, ipython = [], []
    index = 0
    first_line = True  # no code above: where a cell magic may stand
    while index < len(lines):
        end = index + 1
        while lines[end - 1].rstrip("\r\n").endswith("\\") and end < len(lines):
            end += 1
        block = "".join(lines[index:end])
        body = block.rstrip("\r\n")
        call = _ipython_call(body, first_line)
        first_line = first_line and not body.strip()
        if call is None:
            out.extend(lines[index:end])
        else:
            indent = body[: len(body) - len(body.lstrip())]
            tag = _TAG.format(len(ipython))
            stand_in = "\n".join([f"{indent}{call}  {tag}", *[f"{indent}{tag}"] * (end - index - 1)])
            ipython.append((stand_in, body))
            out.append(stand_in + block[len(body) :])
        index = end
    return "".join(out), ipython


def _ipython_call(line: str, first_line: bool) -> str | None:
    """The Python IPython runs for ``line`` (the call of its input transformers), or None."""
    code = line.strip()
    command = " ".join(part.strip().removesuffix("\\").strip() for part in code.splitlines())
    target = ""
    assigned = _ASSIGNED.match(command)
    if assigned:
        target, command = f"{assigned.group(1).strip()} = ", command[assigned.end() :]
    if first_line and command.startswith("%%"):
        magic = _CELL_MAGIC.match(command)
        return f"get_ipython().run_cell_magic({magic.group(1)!r}, {magic.group(2)!r}, '')" if magic else None
    if command.startswith("!!") or (command.startswith("!") and target):
        return f"{target}get_ipython().getoutput({command.lstrip('!').strip()!r})"
    if command.startswith("!"):
        return f"get_ipython().system({command[1:].strip()!r})"
    if command.startswith("%") and not command.startswith("%%"):
        magic = _LINE_MAGIC.match(command)
        return f"{target}get_ipython().run_line_magic({magic.group(1)!r}, {magic.group(2)!r})" if magic else None
    if not target and _HELP.fullmatch(command):
        detail = "pinfo2" if "??" in command else "pinfo"
        return f"get_ipython().run_line_magic({detail!r}, {command.strip('?')!r})"
    return None


# -- writing cells back into the JSON text ---------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
# A \u escape of a non-ASCII character: the file was written with ensure_ascii.
_ESCAPED_NON_ASCII = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")


def _with_sources(document: str, sources: dict[int, str]) -> str:
    """``document`` with the source of the cells numbered in ``sources`` replaced, nothing else."""
    ensure_ascii = document.isascii() and bool(_ESCAPED_NON_ASCII.search(document))
    out, done = [], 0
    for number, (start, end) in _source_spans(document).items():
        if number in sources:
            out += [document[done:start], _source_json(document, start, end, sources[number], ensure_ascii)]
            done = end
    return "".join(out) + document[done:]


def _source_lines(document: str) -> dict[int, list[int]]:
    """For each cell, the line of the JSON text where each of its source lines is."""
    newlines = [match.start() for match in re.finditer("\n", document)]
    found = {}
    for number, (start, _) in _source_spans(document).items():
        starts = [a for a, _ in _elements(document, start)] if document[start] == "[" else [start]
        found[number] = [bisect.bisect_left(newlines, a) + 1 for a in starts]
    return found


def _source_spans(document: str) -> dict[int, tuple[int, int]]:
    """Where each cell's ``source`` value is in the JSON text, by cell number, in order."""
    spans = {}
    for key, start, _ in _members(document, _SPACE.match(document).end()):
        if key == "cells":  # the last of repeated keys counts, as for json.loads
            spans = {
                number: [(s, e) for k, s, e in _members(document, cell_start) if k == "source"][-1]
                for number, (cell_start, _) in enumerate(_elements(document, start), 1)
            }
    return spans


def _source_json(document: str, start: int, end: int, code: str, ensure_ascii: bool) -> str:
    """The JSON for a cell's new ``code``, in the form and layout of its old value.

    A list of lines stays a list with the same separators, and a line that was there
    before keeps its old JSON text (its escapes); a string stays a string.
    """
    if document[start] == '"':
        return json.dumps(code, ensure_ascii=ensure_ascii)
    lines = re.findall(r"[^\n]*\n|[^\n]+", code)
    if not lines:
        return "[]"
    elements = list(_elements(document, start))
    if elements:
        opening = document[start + 1 : elements[0][0]]
        closing = document[elements[-1][1] : end - 1]
        if len(elements) > 1:
            separator = document[elements[0][1] : elements[1][0]]
        else:
            separator = "," + opening if "\n" in opening else ", "
    else:  # `[]`: lay it out as the top-level object is
        line_start = document.rfind("\n", 0, start) + 1
        base = document[line_start : _SPACE.match(document, line_start).end()].lstrip("\r\n")
        top = document[document.index("{") + 1 : _SPACE.match(document, document.index("{") + 1).end()]
        newline = "\r\n" if "\r\n" in top else "\n"
        opening = f"{newline}{base}{top.split(newline)[-1]}" if newline in top else ""
        closing = f"{newline}{base}" if opening else ""
        separator = "," + opening if opening else ", "
    old = {json.loads(document[a:b]): document[a:b] for a, b in elements}
    items = [old.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    return "[" + opening + separator.join(items) + closing + "]"


def _members(document: str, index: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object at ``index``."""
    index = _SPACE.match(document, index + 1).end()
    while document[index] != "}":
        key, index = json.decoder.scanstring(document, index + 1)
        start = _SPACE.match(document, _SPACE.match(document, index).end() + 1).end()  # past the colon
        end = _DECODER.raw_decode(document, start)[1]
        yield key, start, end
        index = _SPACE.match(document, end).end()
        if document[index] == ",":
            index = _SPACE.match(document, index + 1).end()


def _elements(document: str, index: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each element of the JSON array at ``index``."""
    index = _SPACE.match(document, index + 1).end()
    while document[index] != "]":
        end = _DECODER.raw_decode(document, index)[1]
        yield index, end
        index = _SPACE.match(document, end).end()
        if document[index] == ",":
            index = _SPACE.match(document, index + 1).end()
