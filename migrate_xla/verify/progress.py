"""Live progress of the verify runs on a terminal: one line a run, redrawn in place.

Each instrumented process writes ``progress-<pid>.json`` in its run's records folder at
every optimizer step (child/recorder.py): the steps so far and, in the migrated run, the XLA
compilations so far. The parent polls those files while it waits for the children.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TextIO

INTERVAL_S = 0.5


def latest_progress(folder: Path) -> dict | None:
    """The furthest progress any process of a run wrote (None: none yet)."""
    found = []
    for path in folder.glob("progress-*.json"):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return max(found, key=lambda p: p.get("steps", 0)) if found else None


class Progress:
    """One line a run (``roles`` -> records folder), drawn on ``stream`` (a terminal)."""

    def __init__(self, stream: TextIO, steps: int, folders: dict[str, Path]) -> None:
        self.stream = stream
        self.steps = steps
        self.folders = folders
        self.started = time.monotonic()
        self.drawn = 0

    def show(self, finished: dict) -> None:
        """Redraw every line; ``finished`` maps the roles that ended to their Run."""
        width = self._width() - 1  # a line that wraps would take two to redraw
        lines = [self._line(role, folder, finished.get(role))[:width] for role, folder in self.folders.items()]
        up = f"\x1b[{self.drawn}F" if self.drawn else ""  # back to the first line drawn
        self.stream.write(up + "".join(f"\x1b[K{line}\n" for line in lines))
        self.stream.flush()
        self.drawn = len(lines)

    def _line(self, role: str, folder: Path, run) -> str:
        progress = latest_progress(folder) or {}
        steps = run.steps_done if run is not None else progress.get("steps", 0)
        elapsed = run.wall_s if run is not None else time.monotonic() - self.started
        line = f"verify: {role:<9} {steps:>3}/{self.steps} steps {elapsed:6.1f} s"
        compilations = (
            run.compilations if run is not None and run.compilations is not None else progress.get("compilations")
        )
        if compilations is not None:
            line += f", XLA compilations: {compilations}"
        if run is not None:
            line += f", failed: {run.error}" if run.error else ", done"
        return line

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        return columns or 80  # 0: a terminal that never said its size
