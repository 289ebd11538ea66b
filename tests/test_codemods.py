"""The snapshot suite: every fixture under fixtures/<family>/ migrated, with its findings.

Each case also checks that the output compiles and that a second run changes nothing.
Snapshots live in tests/__snapshots__/test_codemods/ as .py (code) and .txt (findings)
files; review them when they change (`pytest --snapshot-update` rewrites them).
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from conftest import FIXTURES, PythonSnapshot, TextSnapshot
from migrate_xla import registry
from migrate_xla.engine import migrate_code, migrate_file, options_for
from migrate_xla.sources import Found

CASES = sorted(p for p in FIXTURES.glob("*/*.py") if p.parent.name != "examples")
FAMILIES = sorted({registry.family(rule) for rule in registry.all_rules()})


def options_of(case):
    """A fixture's first line ``# fixture: unsafe-fixes target=spmd`` asks for unsafe fixes, a target."""
    first = case.read_text().splitlines()[:1]
    words = first[0].removeprefix("# fixture:").split() if first and first[0].startswith("# fixture:") else []
    targets = [w.removeprefix("target=") for w in words if w.startswith("target=")]
    return options_for(unsafe_fixes="unsafe-fixes" in words, target=targets[0] if targets else "single")


def findings(diagnostics) -> str:
    return "".join(
        f"{d.line}:{d.column} {d.code} {d.severity}{' fixed' if d.fixed else ''}: {d.message}\n"
        for d in diagnostics
    )


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_fixture(case, snapshot):
    options = options_of(case)
    source = case.read_text()
    migrated, diagnostics = migrate_code(source, options, str(case))

    assert migrated == snapshot(extension_class=PythonSnapshot, name="migrated")
    assert findings(diagnostics) == snapshot(extension_class=TextSnapshot, name="findings")
    compile(migrated, str(case), "exec")
    again, later = migrate_code(migrated, options, str(case))
    assert again == migrated, "a second run changed the migrated code"
    assert not any(d.fixed for d in later), "a second run still found something to fix"
    if case.stem.endswith("_noop"):
        assert migrated == source and not diagnostics


def test_every_fixture_folder_is_a_family():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()} - {"examples"}
    assert folders <= set(FAMILIES), f"fixture folders that are no rule family: {folders - set(FAMILIES)}"


@lru_cache(maxsize=None)
def codes_reported_in(folder) -> frozenset[str]:
    reported = set()
    for case in folder.glob("*.py"):
        _, diagnostics = migrate_code(case.read_text(), options_of(case), str(case))
        reported |= {d.code for d in diagnostics}
    for notebook in folder.glob("*.ipynb"):  # what reading a notebook reports (XLA0xx)
        result = migrate_file(Found(notebook, folder), options_for())
        assert result.error is None, result.error
        reported |= {d.code for d in result.diagnostics}
    return frozenset(reported)


@pytest.mark.parametrize("rule", registry.all_rules(), ids=lambda r: r.CODE)
def test_every_rule_has_fixtures(rule):
    folder = FIXTURES / registry.family(rule)
    noop = folder / f"{rule.NAME.replace('-', '_')}_noop.py"
    assert noop.exists(), f"{rule.CODE} has no no-change fixture {noop.relative_to(FIXTURES)}"
    assert rule.CODE in codes_reported_in(folder), f"no fixture in {folder.name}/ exercises {rule.CODE}"


# The examples use torch after the rule ran, as real scripts do, so `import torch` stays.
PRELUDE = (
    "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
    "import torch_xla.distributed.parallel_loader as pl\nimport torch_xla.distributed.xla_backend\n"
    "import torch_xla.distributed.spmd as xs\n"
    "from torch.utils.data.distributed import DistributedSampler\n"
)
USE = "print(torch.__version__)\n"


@pytest.mark.parametrize("rule", registry.all_rules(), ids=lambda r: r.CODE)
def test_rule_example(rule, tmp_path):
    """``xla-migrate explain`` shows BEFORE and AFTER: the rule must really do that."""
    assert rule.BEFORE and rule.SUMMARY and rule.why() and rule.NAME
    if registry.family(rule) == "notebook_cells":  # the example is a notebook cell
        notebook = tmp_path / "example.ipynb"
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": rule.BEFORE}
        notebook.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        result = migrate_file(Found(notebook, tmp_path), options_for(select=[rule.CODE]))
        assert result.new_text == result.source.text and rule.AFTER == rule.BEFORE  # left as it is
        assert [d.code for d in result.diagnostics] == [rule.CODE]
        return
    # a target's whole-script rules would move module-level code such as USE into the worker
    prelude = PRELUDE if "single" not in rule.TARGETS else PRELUDE + USE
    options = options_for(select=[rule.CODE], unsafe_fixes=True, target=rule.TARGETS[0])
    migrated, _ = migrate_code(prelude + rule.BEFORE, options)
    assert migrated == prelude + rule.AFTER
