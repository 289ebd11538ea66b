"""Shared test helpers: paths, fixture discovery, migrating code, snapshot formats, files,
and running the CLI in-process. Test modules import them with ``from conftest import ...``;
the project's own modules are imported where a helper runs, not when pytest loads this file."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# fixtures/<family>/*.py: the snapshot fixtures (fixtures/examples/ holds whole scripts for verify)
FIXTURE_CASES = sorted(p for p in FIXTURES.glob("*/*.py") if p.parent.name != "examples")
EXAMPLES = sorted((FIXTURES / "examples").glob("*.py"))


# -- fixtures ------------------------------------------------------------------------------


def fixture_id(case: Path) -> str:
    """``family-stem``: the test id of a fixture, and the name of its snapshot files."""
    return f"{case.parent.name}-{case.stem}"


def is_noop(case: Path) -> bool:
    """A ``*_noop.py`` fixture must come out unchanged and without findings: it is its own snapshot."""
    return case.stem.endswith("_noop")


def fixture_options(case: Path, **extra):
    """A fixture's first line ``# fixture: unsafe-fixes target=spmd runtime=torch-tpu`` asks for
    unsafe fixes, a target, a runtime; ``extra`` adds other options (``select=[...]``)."""
    from migrate_xla.app.run import options_for

    first = case.read_text().splitlines()[:1]
    words = first[0].removeprefix("# fixture:").split() if first and first[0].startswith("# fixture:") else []
    given = dict(word.split("=", 1) for word in words if "=" in word)
    return options_for(
        unsafe_fixes="unsafe-fixes" in words,
        target=given.get("target", "single"),
        runtime=given.get("runtime", "torch-xla"),
        **extra,
    )


RULES_NOTE = re.compile(r"\[([\w-]+(?:, [\w-]+)*)\]\s*\Z")


def fixture_rules(case: Path) -> list[str] | None:
    """The rules a fixture's header names: ``[XLA201, XLA202]`` at the end of its module
    docstring; None when there is no such list. A fixture that must name no accelerator (a
    CPU-only script: the text "XLA" would wake the rules' accelerator test) names its rules
    by their names instead (``[sync-after-optimizer-step]``); those come back as given."""
    docstring = ast.get_docstring(ast.parse(case.read_text()), clean=False)
    found = RULES_NOTE.search(docstring or "")
    return found.group(1).split(", ") if found else None


# -- migrating code ------------------------------------------------------------------------


def migrate_with_findings(code: str, **options):
    """``(migrated, diagnostics)`` of ``code`` (dedented) under ``options_for(**options)``."""
    from migrate_xla.app.run import migrate_code, options_for

    return migrate_code(textwrap.dedent(code), options_for(**options))


def migrate(code: str, **options) -> str:
    """The migrated text of ``code`` (dedented) under ``options_for(**options)``."""
    return migrate_with_findings(code, **options)[0]


def codes(code: str, **options) -> list[str]:
    """The codes of the findings migrating ``code`` (dedented) reports, in report order."""
    return [d.code for d in migrate_with_findings(code, **options)[1]]


# -- snapshots -----------------------------------------------------------------------------


class PythonSnapshot(SingleFileSnapshotExtension):
    """A snapshot stored as a reviewable .py file."""

    _write_mode = WriteMode.TEXT
    file_extension = "py"


class TextSnapshot(SingleFileSnapshotExtension):
    """A snapshot stored as a plain .txt file."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


# -- files and repositories ----------------------------------------------------------------


def write(path: Path, data: str | bytes = "x = 1\n") -> Path:
    """Write ``data`` (text as UTF-8, bytes as they are) to ``path``, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def make_repo(path: Path) -> None:
    """Make ``path`` the top of a git repository (a bare ``.git`` folder where git is missing)."""
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(path)], check=True)
    else:
        (path / ".git").mkdir()  # all the walker looks for


def copy_checkout(dest: Path) -> Path:
    """Copy this checkout as it is now into ``dest``: its tracked and new files, not the
    ignored ones (what ``pip install .`` or pre-commit would build from a clone). Git
    variables of an enclosing hook (GIT_INDEX_FILE, ...) are left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    command = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"]
    listed = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


# -- the command line ----------------------------------------------------------------------


@pytest.fixture
def cli():
    """Run ``xla-migrate ARGS`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from migrate_xla.app.cli import main

    def run(*args: str, input: str | bytes | None = None):
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return run


def run_verify(*args: str):
    """Run ``xla-migrate verify ARGS`` in-process; returns click's Result."""
    from migrate_xla.verify.command import verify_command

    return CliRunner().invoke(verify_command, list(args), catch_exceptions=False)
