"""Which frames of a child's Python stack are the user's: not torch's, another library's,
Python's own or the instrumentation's. The harness reads the frames torch_xla reports
(compilation causes, crashes) with it, the TPU report the stacks of the graphs' operations."""

from __future__ import annotations

from pathlib import Path

# The children's PYTHONPATH gets a folder of this name holding the instrumentation alone
# (harness._instrumentation); their frames in it are not the user's.
INSTRUMENT_FOLDER = "xla-migrate-instrument"


def is_library(file: str) -> bool:
    """Whether ``file`` (a frame's file name) is installed code or Python's, not the user's."""
    parts = Path(file).parts
    return (
        "site-packages" in parts
        or "dist-packages" in parts
        or file.startswith("<")
        or INSTRUMENT_FOLDER in parts
        or "/lib/python3" in file
    )


def user_frame(frames: list[dict]) -> dict | None:
    """The innermost of ``frames`` (innermost first, each with ``file`` and ``line``) in the
    user's code; None where every frame is a library's."""
    return next((frame for frame in frames if not is_library(frame["file"])), None)
