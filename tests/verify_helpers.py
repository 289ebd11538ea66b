"""What the verify tests share: the test scripts, the tool's migration of a script (sabotaged on
request), and what an example under fixtures/examples/ says about how it is verified."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from conftest import ROOT
from migrate_xla.app.run import migrate_code, options_for

SCRIPTS = ROOT / "tests" / "scripts"
TINY = SCRIPTS / "tiny_mlp.py"


def migrated_copy(script: Path, tmp_path: Path, *breakages: tuple[str, str]) -> Path:
    """The tool's migration of ``script``, sabotaged by replacing each ``old`` with ``new``."""
    code, _ = migrate_code(script.read_text(), options_for())
    for old, new in breakages:
        assert old in code, old
        code = code.replace(old, new, 1)
    path = tmp_path / f"{script.stem}_xla.py"
    path.write_text(code)
    return path


def migrated_tiny(tmp_path: Path, breakage: tuple[str, str] | None = None) -> Path:
    return migrated_copy(TINY, tmp_path, *([breakage] if breakage else []))


def example_args(example: Path) -> list[str]:
    """What an example's ``# verify-args: ...`` line says its user passes (``--cuda``, say)."""
    found = re.search(r"^# verify-args: (.*)$", example.read_text(), re.MULTILINE)
    return shlex.split(found.group(1)) if found else []


def example_runtimes(example: Path) -> list[str]:
    """The runtimes an example verifies on: its ``# verify-runtimes: ...`` line (a Lightning example:
    torch-xla only, lightning 2.6 having no TorchTPU accelerator), else both."""
    found = re.search(r"^# verify-runtimes: ([\w\- ,]+?)(?:  \(|$)", example.read_text(), re.MULTILINE)
    return [r.strip() for r in found.group(1).replace(",", " ").split()] if found else ["torch-xla", "torch-tpu"]


def example_settings(example: Path) -> dict:
    """An example's ``# verify-unsafe-fixes`` line: it keeps its losses only with the unsafe
    fixes (the workaround of a torch_xla defect, XLA9xx: docs/runtime_defects.md), or runs on
    XLA only with them (Hogwild made data parallel, XLA612)."""
    return {"unsafe_fixes": True} if re.search(r"^# verify-unsafe-fixes$", example.read_text(), re.MULTILINE) else {}
