"""The lines of the migrated copies told as the lines of the user's own files they came from: what
compiled, crashed or ran in a migrated copy is reported at the user's line."""

from __future__ import annotations

import difflib
from pathlib import Path


def in_user_files(causes: list[dict], originals: dict[Path, Path]) -> list[dict]:
    """``causes`` with each line of a migrated copy (``originals``: copy -> the user's file)
    told as the line of the user's own file it came from: the same line where the migration
    kept it, the line it was added after or rewritten from otherwise."""
    originals = {str(copy.resolve()): original for copy, original in originals.items()}
    maps: dict[str, list[int]] = {}
    moved = []
    for cause in causes:
        original = originals.get(str(Path(cause["file"]).resolve())) if cause.get("file") else None
        if original is None:
            moved.append(cause)
            continue
        if cause["file"] not in maps:
            try:
                maps[cause["file"]] = _line_map(
                    original.read_text(errors="replace"), Path(cause["file"]).read_text(errors="replace")
                )
            except OSError:
                maps[cause["file"]] = []
        lines = maps[cause["file"]]
        if 0 < cause["line"] <= len(lines):
            cause = {**cause, "file": str(original), "line": lines[cause["line"] - 1], "migrated_line": cause["line"]}
        moved.append(cause)
    return moved


def _line_map(original: str, migrated: str) -> list[int]:
    """For each line of ``migrated`` (1-based), the line of ``original`` it stands for."""
    before, after = original.splitlines(), migrated.splitlines()
    lines = [1] * len(after)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag in ("equal", "replace"):
                lines[j] = min(i1 + (j - j1), max(i1, i2 - 1)) + 1
            else:  # added by the migration: the original line above it
                lines[j] = max(i1, 1)
    return lines
