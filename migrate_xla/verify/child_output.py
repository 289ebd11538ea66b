"""What the harness reads of a child's output: torch_xla's account of each compilation and
execution (PT_XLA_DEBUG_LEVEL=2), where the last traceback left the user's code, and the part
of the stderr the report shows."""

from __future__ import annotations

import re
from pathlib import Path

from migrate_xla.verify.frames import is_library as _is_library
from migrate_xla.verify.frames import library_of


def _analysis(kind: str) -> tuple[re.Pattern, re.Pattern]:
    """PT_XLA_DEBUG_LEVEL=2's blocks of one kind (``Compilation``, ``Execution``) and their frames."""
    block = re.compile(rf"^{kind} Analysis: {kind} Cause\n(.*?)^{kind} Analysis: -{{10,}}", re.S | re.M)
    return block, re.compile(rf"^{kind} Analysis:\s+(\S+) \((.+):(\d+)\)$", re.M)


def compile_causes(text: str, script: Path, kind: str = "Compilation") -> list[dict]:
    """Each compilation (or, with ``kind="Execution"``, each execution) torch_xla reported
    (PT_XLA_DEBUG_LEVEL=2): its cause and the innermost frame of the user's code (not torch's,
    not torch_xla's, not ours)."""
    blocks, frames = _analysis(kind)
    causes = []
    for block in blocks.finditer(text):
        body = block.group(1)
        lines = [line.removeprefix(f"{kind} Analysis:").strip() for line in body.splitlines()]
        cause = lines[0] if lines else ""
        where = {}
        for name, file, line in frames.findall(body):  # innermost first
            if not _is_library(file):
                where.update(function=name, file=file, line=int(line))
                break
            library = library_of(file)
            if library is not None and "library" not in where:  # the library's line the user's code called
                where["library"] = {**library, "line": int(line), "function": name}
        causes.append({"cause": cause, **where})
    return causes


TRACEBACK = "Traceback (most recent call last):"
TRACEBACK_FRAME = re.compile(r'^  File "(.+)", line (\d+), in (.+)$', re.M)


def last_traceback(lines: list[str]) -> tuple[int, int] | None:
    """The last traceback among ``lines``: the index of its first line and of its exception
    line (the first line after its frames that is not indented; ``len(lines)`` where the output
    ends before one). Found wherever it is: a tensor printed after it, or in its message, may
    fill the tail of the output."""
    start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].rstrip().endswith(TRACEBACK)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end][0].isspace()):
        end += 1
    return start, end


def crash_site(text: str) -> dict | None:
    """Where the last traceback in ``text`` (a child's stderr, the whole of it) left the user's
    code: the innermost frame outside torch, the libraries and the instrumentation, and the
    exception (its line, and its message from there: ``exception_text``)."""
    lines = text.splitlines()
    found = last_traceback(lines)
    if found is None:
        return None
    start, end = found
    frames = [m.groups() for m in map(TRACEBACK_FRAME.match, lines[start + 1 : end]) if m]
    if not frames:
        return None
    exception = lines[end] if end < len(lines) else ""
    site = {"exception": exception[:300], "exception_text": "\n".join(lines[end : end + 40])[:2000]}
    for file, line, function in reversed(frames):
        if not _is_library(file):
            site.update(function=function, file=file, line=int(line))
            break
    for file, line, function in reversed(frames):  # raised in a library the user's code called?
        if not _is_library(file):
            break
        library = library_of(file)  # None for torch's own frames and Python's: look further out
        if library is not None:
            site["library"] = {**library, "line": int(line), "function": function}
            break
    return site


def stderr_report(text: str, lines: int = 25) -> str:
    """What the report shows of a child's stderr: its last ``lines`` lines, and where the last
    traceback's exception is not among them (a large tensor printed after it, or in its
    message), that traceback and exception first, what follows cut down to its last lines."""
    every = text.splitlines()
    tail = every[-lines:]
    found = last_traceback(every)
    if found is None or found[1] >= len(every) - lines:
        return "\n".join(tail)
    start, end = found
    block = every[start : end + 1]
    if len(block) > 20:  # a deep stack: its first line and its innermost frames
        block = [block[0], "  ...", *block[-18:]]
    message = every[end + 1 : end + 4]
    rest = every[end + 1 + len(message) :]
    last = rest[-5:]
    cut = len(rest) - len(last)
    return "\n".join([*block, *message, *([f"[... {cut} more lines ...]"] if cut else []), *last])
