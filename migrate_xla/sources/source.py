"""The one source type: a file's text, the Python program the engine migrates, and what
is needed to write it back the same way (migrate_xla/sources/__init__.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple


class SourceError(Exception):
    """A file that cannot be read, decoded or written; the message says why."""


class Unit(NamedTuple):
    """A piece of a file that a person reads on its own: a notebook cell, or a whole .py file."""

    cell: int | None  # the notebook cell's number (1 is the first cell), None for a .py file
    text: str


class Source:
    """One file's text and what is needed to write it back the same way; never changed once read.

    ``text`` is the Python program the engine migrates; the methods map a migrated
    program back to the file (a notebook overrides them). A plain class, not a dataclass:
    every run reads files, and importing dataclasses and making one cost a run whose files
    wake no rule about 1.5 ms, a tenth of what it adds to starting click.
    """

    __slots__ = ("path", "text", "encoding", "mode", "mtime_ns")

    def __init__(self, path: Path, text: str, encoding: str, mode: int, mtime_ns: int) -> None:
        self.path = path
        self.text = text
        self.encoding = encoding  # "utf-8-sig" when the file starts with a BOM
        self.mode = mode
        self.mtime_ns = mtime_ns

    def encode(self, text: str) -> bytes:
        """The file's bytes for the (migrated) program ``text``."""
        return self.ending_kept(text).encode(self.encoding)

    def units(self, text: str) -> list[Unit]:
        """``text`` (this program or its migration) in the pieces diffs and findings name."""
        return [Unit(None, self.ending_kept(text))]

    def ending_kept(self, text: str) -> str:
        """``text`` ending with a line break where the file did: LibCST drops a final ``\\r``
        (a file with old Mac line ends) from the code it prints, and only that one."""
        if text and self.text.endswith("\r") and not text.endswith(("\r", "\n")):
            return text + "\r"
        return text

    def locate(self, diagnostics: list) -> list:
        """Findings at positions of the program, moved to their places in the file."""
        return diagnostics

    def file_lines(self, text: str) -> Callable[[int | None, int], int]:
        """For the file written from ``text``: (cell, line in the cell) -> line in the file."""
        return lambda cell, line: line
