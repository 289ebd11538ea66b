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


class RecompilingWatch:
    """Whether a migrated run compiles new graphs at every step and so will not finish in time:
    torch_xla compiles a graph for each new shape, and a model whose shapes change with the data
    (a detection model's proposals: torchvision's Faster R-CNN compiled about 60 graphs a step,
    150 s a step on CPU PJRT) would never settle. Such a run is a finding, not a wait."""

    # the steps in a row that must each have compiled anew. A step's count is read at its
    # optimizer step, before the sync that compiles its graph: the count at step k + 1 says
    # whether step k compiled, so STEPS + 1 counts are read (the first step's graph and the one
    # its optimizer's new state makes at the second are every training's: timm's ResNet-18 read
    # 0, 1, 2 graphs at steps 1 to 3, then settled)
    STEPS = 3

    def __init__(self, max_steps: int, timeout: float) -> None:
        self.max_steps = max_steps
        self.timeout = timeout
        self.seen: list[tuple[int, int]] = []  # (steps, compilations) as the steps advanced

    def why_stop(self, progress: dict | None, elapsed: float) -> str | None:
        """Words for the run's error where it should stop now (None: let it go on)."""
        if not progress or progress.get("compilations") is None:
            return None
        steps, compilations = progress.get("steps", 0), progress["compilations"]
        if not self.seen or steps > self.seen[-1][0]:
            self.seen.append((steps, compilations))
        last = self.seen[-(self.STEPS + 1) :]
        if len(last) <= self.STEPS or steps >= self.max_steps:
            return None
        if any(later[1] <= earlier[1] for earlier, later in zip(last, last[1:])):
            return None
        projected = elapsed / steps * self.max_steps
        if projected <= self.timeout:
            return None
        return (
            f"{RECOMPILING}: {compilations} graphs by step {steps}, {elapsed / steps:.0f} s a step, so "
            f"{self.max_steps} steps would take about {projected:.0f} s, past --timeout {self.timeout:g} s"
        )


RECOMPILING = "stopped: compiled new graphs at every step"
