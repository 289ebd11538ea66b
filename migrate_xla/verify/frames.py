"""Which frames of a child's Python stack are the user's: not torch's, another library's,
Python's own or the instrumentation's. The harness reads the frames torch_xla reports
(compilation causes, crashes) with it, the TPU report the stacks of the graphs' operations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

# The children's PYTHONPATH gets a folder of this name holding the instrumentation alone
# (children._instrumentation); their frames in it are not the user's.
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
        or _installed_at(str(Path(file).parent)) is not None
    )


@lru_cache(maxsize=4096)
def _installed_at(folder: str) -> int | None:
    """For a package installed outside site-packages (``pip install --target DIR``, a folder on
    PYTHONPATH): the index in ``folder``'s parts of the folder it is installed in, found by the
    distribution's dist-info beside the package; None for anything else."""
    parts = Path(folder).parts
    return next((i for i in range(len(parts) - 2, 0, -1) if _dist_info(Path(*parts[: i + 1]), parts[i + 1])), None)


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
    if INSTRUMENT_FOLDER in parts:
        return None
    site = next((i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")), None)
    if site is None:  # installed elsewhere (pip install --target DIR): its dist-info lies beside it
        site = _installed_at(str(Path(file).parent))
    if site is None or site + 1 >= len(parts):
        return None
    package = parts[site + 1].removesuffix(".py")
    if package in RUNTIME_PACKAGES:
        return None
    info = _dist_info(Path(*parts[: site + 1]), package)
    version = info.name.removesuffix(".dist-info").partition("-")[2] or None if info else None
    return {"name": package, "version": version, "path": "/".join(parts[site + 1 :])}


@lru_cache(maxsize=4096)
def _dist_info(folder: Path, package: str) -> Path | None:
    """The dist-info folder in ``folder`` of the distribution named as ``package`` (a top-level
    module), or None."""
    wanted = package.removesuffix(".py").lower().replace("-", "_")
    try:
        infos = list(folder.glob("*.dist-info"))
    except OSError:
        return None
    return next((i for i in infos if i.name.partition("-")[0].lower().replace("-", "_") == wanted), None)
