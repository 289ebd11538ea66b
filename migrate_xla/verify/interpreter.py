"""The Python that runs the user's training, and whether it can run a verify.

``verify`` runs both children with the interpreter the user trains with, not the one
running xla-migrate (a pipx or pre-commit environment has neither torch nor the user's
packages): ``--python``, else the active virtual environment's, else xla-migrate's own.
Before any run, a quick probe in a subprocess (package metadata only, no import of torch)
says whether it has torch, and torch_xla of the same release where the migrated run needs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

# The pair of the `verify` extra (pyproject.toml): torch_xla X.Y works only with torch X.Y.
WORKING_PAIR = ("2.9.0", "2.9.0")
PROBE_TIMEOUT_S = 60.0
# Versions from the packages' metadata; a package importable without metadata (a source
# checkout on PYTHONPATH) is "unknown".
PROBE = """\
import importlib.util, json, sys
from importlib import metadata
found = {"version": sys.version.split()[0]}
for name in ("torch", "torch_xla"):
    try:
        found[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        found[name] = "unknown" if importlib.util.find_spec(name) else None
print(json.dumps(found))
"""


class InterpreterError(Exception):
    """The interpreter cannot run a verify; the message says what is missing and how to fix it."""


@dataclass
class Interpreter:
    path: str
    chosen_by: str  # "--python", "the active virtual environment ($VIRTUAL_ENV)", "xla-migrate's own"
    version: str = ""
    torch: str | None = None
    torch_xla: str | None = None

    def describe(self) -> str:
        return f"{self.path} ({self.chosen_by})"

    def summary(self) -> str:
        """Which interpreter, why, and what it has (the line of the verify table)."""
        have = ", ".join(
            f"{name} {version or 'missing'}"
            for name, version in (("Python", self.version), ("torch", self.torch), ("torch_xla", self.torch_xla))
        )
        return f"{self.describe()}: {have}"

    def to_dict(self) -> dict:
        return asdict(self)


def choose(given: str | None, env: dict[str, str]) -> Interpreter:
    """``--python``, else the active virtual environment's python, else this one (not probed yet)."""
    if given:
        found = given if os.sep in given or (os.altsep and os.altsep in given) else shutil.which(given)
        if found is None or not Path(found).is_file():
            raise InterpreterError(f"--python {given}: no such interpreter")
        return Interpreter(os.path.abspath(found), "--python")  # not resolved: a venv's python is a link
    venv = env.get("VIRTUAL_ENV")
    if venv:
        python = Path(venv) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        if not python.is_file():
            raise InterpreterError(
                f"$VIRTUAL_ENV is {venv}, which has no {python.name}: activate another environment or give --python"
            )
        return Interpreter(str(python), "the active virtual environment ($VIRTUAL_ENV)")
    if not sys.executable:
        raise InterpreterError("cannot tell which Python runs xla-migrate: give --python")
    return Interpreter(sys.executable, "xla-migrate's own")


def probe(interpreter: Interpreter, env: dict[str, str]) -> Interpreter:
    """Fill in its Python, torch and torch_xla versions (None: not installed)."""
    try:
        done = subprocess.run(
            [interpreter.path, "-c", PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InterpreterError(f"cannot run {interpreter.describe()}: {exc}") from None
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (done.stderr or done.stdout).strip()[-500:]
        raise InterpreterError(
            f"{interpreter.describe()} did not run as a Python interpreter "
            f"(exit status {done.returncode}){': ' + tail if tail else ''}"
        ) from None
    interpreter.version, interpreter.torch, interpreter.torch_xla = found["version"], found["torch"], found["torch_xla"]
    return interpreter


def require(interpreter: Interpreter, xla: bool) -> None:
    """Raise unless it has torch, and torch_xla of the same release where ``xla`` (a migrated run) needs it."""
    torch, torch_xla = interpreter.torch, interpreter.torch_xla
    where = f"{interpreter.describe()} runs your script"
    pair = (
        f"torch {WORKING_PAIR[0]} with torch_xla {WORKING_PAIR[1]} "
        f"(pip install torch=={WORKING_PAIR[0]} torch_xla=={WORKING_PAIR[1]})"
    )
    rule = "torch_xla X.Y works only with torch X.Y"
    fix = "or give --python the interpreter you train with"
    missing = [name for name, version in (("torch", torch), ("torch_xla", torch_xla)) if version is None]
    if not xla:
        missing = [name for name in missing if name == "torch"]
    if missing:
        has = "".join(
            f", it has {name} {version}"
            for name, version in (("torch", torch), ("torch_xla", torch_xla))
            if version is not None and name not in missing
        )
        release = _release(torch) if torch is not None else None
        if not xla:
            install = "torch"
        elif missing == ["torch_xla"] and release:
            install = f"torch_xla {release}, the release of its torch (pip install 'torch_xla=={release}.*')"
        else:
            install = f"the pair that works: {pair}"
        needs = " (the migrated run needs both)" if xla else ""
        raise InterpreterError(
            f"{where}, but it has no {' and no '.join(missing)}{needs}{has}: install {install} "
            f"there, {fix}{f' ({rule})' if xla else ''}"
        )
    if xla and None not in (_release(torch), _release(torch_xla)) and _release(torch) != _release(torch_xla):
        raise InterpreterError(
            f"{where}, but its torch {torch} and torch_xla {torch_xla} do not work together "
            f"({rule}): install the pair that works, {pair}, {fix}"
        )


def _release(version: str) -> str | None:
    """'2.9' of '2.9.0+cu128'; None when unknown."""
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None
