"""The snapshot suite: every fixture under fixtures/<family>/ migrated, with its findings.

Each case also checks that the output compiles and that a second run changes nothing.
Snapshots live in tests/__snapshots__/test_codemods/ as .py (code) and .txt (findings)
files; review them when they change (`pytest --snapshot-update` rewrites them). A
``*_noop.py`` fixture has none: it must come out as it went in, without findings.

Each fixture's docstring ends with the rules it exercises, ``[XLA201, XLA202]``: exactly
the codes it reports; a ``_noop`` fixture names the rules it is about, which must leave it
as it is, run alone as with all the others.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from conftest import (
    FIXTURE_CASES,
    FIXTURES,
    PythonSnapshot,
    TextSnapshot,
    fixture_id,
    fixture_options,
    fixture_rules,
    is_noop,
)
from migrate_xla.app.run import migrate_code, migrate_file, options_for
from migrate_xla.engine import registry
from migrate_xla.sources.discovery import Found

FAMILIES = sorted({registry.family(rule) for rule in registry.all_rules()})
RULES = {rule.CODE: rule for rule in registry.all_rules()}
CODE_OF_NAME = {rule.NAME: rule.CODE for rule in registry.all_rules()}


def findings(diagnostics) -> str:
    return "".join(
        f"{d.line}:{d.column} {d.code} {d.severity}{' fixed' if d.fixed else ''}{' suppressed' if d.suppressed else ''}: "
        f"{d.message}\n"
        for d in diagnostics
    )


@cache
def migrated(case):
    """``(source, migrated, diagnostics)`` of a fixture under the options its first line asks for."""
    source = case.read_text()
    return (source, *migrate_code(source, fixture_options(case), str(case)))


@pytest.mark.parametrize("case", FIXTURE_CASES, ids=fixture_id)
def test_fixture(case, snapshot):
    source, migrated_code, diagnostics = migrated(case)
    if is_noop(case):  # its own snapshot
        assert migrated_code == source, "a _noop fixture was changed"
        reported = [d for d in diagnostics if not d.suppressed]
        assert not reported, f"a _noop fixture has findings:\n{findings(reported)}"
    else:
        assert migrated_code == snapshot(extension_class=PythonSnapshot, name="migrated")
        assert findings(diagnostics) == snapshot(extension_class=TextSnapshot, name="findings")
    compile(migrated_code, str(case), "exec")
    options = fixture_options(case)
    again, later = migrate_code(migrated_code, options, str(case))
    assert again == migrated_code, "a second run changed the migrated code"
    assert not any(d.fixed for d in later), "a second run still found something to fix"


@pytest.mark.parametrize("case", FIXTURE_CASES, ids=fixture_id)
def test_fixture_header_names_the_rules_it_exercises(case):
    named = fixture_rules(case)
    assert named, f"{case.relative_to(FIXTURES)}: its docstring does not end with the rules it exercises, [XLA201, ...]"
    wanted = [CODE_OF_NAME.get(word, word) for word in named]
    unknown = [word for word, code in zip(named, wanted) if code not in RULES]
    assert not unknown, f"no such rule: {unknown}"
    source, _, diagnostics = migrated(case)
    if is_noop(case):  # all rules leave it as it is (test_fixture); so do the ones it names, alone
        alone = migrate_code(source, fixture_options(case, select=wanted), str(case))
        assert alone == (source, []), f"{wanted} alone change this _noop fixture"
    else:
        reported = sorted({d.code for d in diagnostics if not d.suppressed})
        assert sorted(set(wanted)) == reported, "the header names exactly the codes the fixture reports"


def test_every_fixture_folder_is_a_family():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()} - {"examples"}
    assert folders <= set(FAMILIES), f"fixture folders that are no rule family: {folders - set(FAMILIES)}"


@cache
def codes_reported_in(folder) -> frozenset[str]:
    reported = set()
    for case in folder.glob("*.py"):
        reported |= {d.code for d in migrated(case)[2]}
    # what reading a notebook reports (XLA0xx); frameworks' YAML configs (XLA827, XLA828: test_config_files.py)
    for notebook in [*folder.glob("*.ipynb"), *folder.glob("*.yaml")]:
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
    "import torch_xla.distributed.spmd as xs\nimport torch_xla.experimental.distributed_checkpoint as xc\n"
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
    if getattr(rule, "EXAMPLE_LANGUAGE", None) == "yaml":  # the example is a framework's config file
        config = tmp_path / "config.yaml"
        config.write_text(rule.BEFORE)
        result = migrate_file(Found(config, tmp_path), options_for(select=[rule.CODE]))
        assert result.new_text == rule.AFTER and {d.code for d in result.diagnostics} == {rule.CODE}
        return
    # a target's whole-script rules would move module-level code such as USE into the worker
    prelude = PRELUDE if "single" not in rule.TARGETS else PRELUDE + USE
    options = options_for(select=[rule.CODE], unsafe_fixes=True, target=rule.TARGETS[0])
    migrated, _ = migrate_code(prelude + rule.BEFORE, options)
    assert migrated == prelude + rule.AFTER
