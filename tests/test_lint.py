"""The lint set-up: the ruff that pre-commit installs is the one constraints.txt pins (make lint)."""

from __future__ import annotations

import re

from conftest import ROOT


def test_pre_commit_runs_the_pinned_ruff():
    pinned = re.search(r"^ruff==(\S+)$", (ROOT / "constraints.txt").read_text(), re.MULTILINE)
    assert pinned, "constraints.txt pins no ruff"
    hooks = re.findall(r'"ruff==([^"]+)"', (ROOT / ".pre-commit-config.yaml").read_text())
    assert hooks and set(hooks) == {pinned.group(1)}, (
        f".pre-commit-config.yaml installs ruff {hooks}, constraints.txt pins {pinned.group(1)}"
    )
