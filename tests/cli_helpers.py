"""What the command-line tests share: sample scripts, the finding line's pattern, a snapshot of a
tree, the real console entry point in a subprocess, and paths made unreadable as for a user who
is not root. Most CLI tests run the CLI in-process (conftest's ``cli`` fixture); those that need
stream separation, stdin or the process pool run ``run`` here."""

from __future__ import annotations

import builtins
import io
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

FIXABLE = 'import torch\ndevice = torch.device("cuda")\nx = torch.ones(2).cuda()\n'
CLEAN = "x = 1\n"
# An exotic CUDA API no rule will ever convert: the XLA899 catch-all flags it (error level, TODO, no fix).
UNFIXABLE = "import torch\nfn = torch.cuda.jiterator._create_jit_fn(code)\n"
TODO = "# TODO(xla-migrate): XLA899"
FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>XLA\d{3}) (?P<message>.+)$")


def is_migrated(text: str) -> bool:
    """What a user checks first: the CUDA device is gone, the XLA one is there, it still compiles."""
    compile(text, "<migrated>", "exec")
    return "cuda" not in text and "torch_xla.device()" in text and "import torch_xla" in text


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root``: bytes and mode (to assert that nothing was touched)."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode))
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".git" not in p.parts
    }


def run(*args: str, cwd: Path, input: bytes | None = None) -> subprocess.CompletedProcess:
    """The real console entry point, as a shell or pre-commit runs it."""
    return subprocess.run(
        [sys.executable, "-m", "migrate_xla", *args], cwd=cwd, input=input, capture_output=True, timeout=120
    )


def make_unreadable(monkeypatch, *locked: Path) -> None:
    """Make ``locked`` files and folders behave as after ``chmod 000`` for a user who is not root.

    The tests run as root here, whom permissions do not stop; so opening, listing or
    checking access to a locked path, and looking at anything below a locked folder,
    fail with PermissionError as they would for that user.
    """
    locked = tuple(Path(os.path.abspath(p)) for p in locked)

    def where(path) -> tuple[bool, bool]:  # (is a locked path, is below one)
        try:
            target = Path(os.path.abspath(os.fsdecode(path)))
        except TypeError:  # a file descriptor
            return False, False
        return target in locked, any(folder in target.parents for folder in locked)

    def deny(path):
        return PermissionError(13, "Permission denied", os.fsdecode(path))

    real_stat, real_scandir, real_open, real_access = os.stat, os.scandir, io.open, os.access

    def fake_stat(path, *args, **kwargs):
        if where(path)[1]:
            raise deny(path)
        return real_stat(path, *args, **kwargs)

    def fake_scandir(path="."):
        if any(where(path)):
            raise deny(path)
        return real_scandir(path)

    def fake_open(file, *args, **kwargs):
        if not isinstance(file, int) and any(where(file)):
            raise deny(file)
        return real_open(file, *args, **kwargs)

    def fake_access(path, mode, *args, **kwargs):
        return not any(where(path)) and real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "stat", fake_stat)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    monkeypatch.setattr(os, "access", fake_access)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(builtins, "open", fake_open)
