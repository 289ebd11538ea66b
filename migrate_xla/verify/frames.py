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


# Installed packages whose frames are not "a library the script uses" but the runtime itself:
# a crash in them is the script's or the migration's, told at the user's line.
RUNTIME_PACKAGES = ("torch", "torch_xla", "torchgen", "functorch")


def library_of(file: str) -> dict | None:
    """The installed package a frame's ``file`` belongs to, other than torch's own and the
    instrumentation: its ``name``, ``version`` (from its dist-info beside it, None where there is
    none) and the file's path inside site-packages (``path``); None for the user's code, Python's
    and torch's."""
    parts = Path(file).parts
    site = next((i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")), None)
    if site is None or site + 1 >= len(parts) or INSTRUMENT_FOLDER in parts:
        return None
    package = parts[site + 1].removesuffix(".py")
    if package in RUNTIME_PACKAGES:
        return None
    folder = Path(*parts[: site + 1])
    wanted = package.lower().replace("-", "_")
    version = None
    for info in folder.glob("*.dist-info"):
        name, _, rest = info.name.removesuffix(".dist-info").partition("-")
        if name.lower().replace("-", "_") == wanted:
            version = rest or None
            break
    return {"name": package, "version": version, "path": "/".join(parts[site + 1 :])}
