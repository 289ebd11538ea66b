"""Shared test helpers: paths, snapshot formats, and running the CLI in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


class PythonSnapshot(SingleFileSnapshotExtension):
    """A snapshot stored as a reviewable .py file."""

    _write_mode = WriteMode.TEXT
    file_extension = "py"


class TextSnapshot(SingleFileSnapshotExtension):
    """A snapshot stored as a plain .txt file."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def cli():
    """Run ``xla-migrate ARGS`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from migrate_xla.cli import main

    def run(*args: str, input: str | bytes | None = None):
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return run
