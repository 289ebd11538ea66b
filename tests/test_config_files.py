"""Frameworks' config files (migrate_xla/engine/configs.py: Accelerate's, XLA827; Lightning Trainer
configs, XLA828): the YAML fixtures of fixtures/frameworks/ migrated with their findings (snapshots: the migrated file as .yaml, the
findings as .txt; a ``*_noop.yaml`` comes out as it went in, without findings), the second
run changing nothing; what a run over a project does with its YAML files; and accelerate
itself reading what the migration wrote."""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from conftest import FIXTURES, TextSnapshot, write
from migrate_xla.app.run import migrate_file, options_for
from migrate_xla.sources.discovery import Found

CONFIGS = sorted((FIXTURES / "frameworks").glob("*.yaml"))
MULTI_GPU = FIXTURES / "frameworks" / "accelerate_config_multi_gpu.yaml"


class YamlSnapshot(SingleFileSnapshotExtension):
    """A snapshot stored as a reviewable .yaml file (line ends as \\n: test_line_ends_... checks CRLF)."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


def migrated(path: Path, **options):
    result = migrate_file(Found(path, path.parent), options_for(**options))
    assert result.error is None, result.error
    return result


def findings(result) -> str:
    return "".join(
        f"{d.line}:{d.column} {d.code} {d.severity}{' fixed' if d.fixed else ''}: {d.message}\n"
        for d in result.diagnostics
    )


def named_rule(config: Path) -> str:
    """The rule a fixture's header (its leading comment lines) names: ``[XLA827]``."""
    header = "".join(itertools.takewhile(lambda line: line.startswith("#"), config.read_text().splitlines()))
    (code,) = re.findall(r"\[(XLA\d+)\]", header)
    return code


def test_there_are_config_fixtures_of_each_kind():
    by_rule = {}
    for path in CONFIGS:
        by_rule.setdefault(named_rule(path), []).append(path.stem)
    assert set(by_rule) == {"XLA827", "XLA828"}
    for stems in by_rule.values():
        assert any(stem.endswith("_noop") for stem in stems) and len(stems) >= 3


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_fixture(config, snapshot, tmp_path):
    result = migrated(config)
    assert {d.code for d in result.diagnostics} <= {named_rule(config)}
    if config.stem.endswith("_noop"):
        assert result.new_text == result.source.text and not result.diagnostics
        return
    assert result.diagnostics, "a fixture that is no _noop must report something"
    assert result.new_text.replace("\r\n", "\n") == snapshot(extension_class=YamlSnapshot, name="migrated")
    assert findings(result) == snapshot(extension_class=TextSnapshot, name="findings")
    again = tmp_path / config.name
    again.write_bytes(result.source.encode(result.new_text))
    second = migrated(again)
    if second.source is None:  # no longer a GPU's config (a Lightning one now on "tpu"): left unread
        assert named_rule(config) == "XLA828" and second.new_text is None
        return
    assert second.new_text == second.source.text, "a second run changed the config"
    assert not [d for d in second.diagnostics if d.fixed], "a second run still found something to fix"


def test_line_ends_quotes_and_comments_are_kept():
    result = migrated(FIXTURES / "frameworks" / "accelerate_config_single_gpu_legacy.yaml")
    lines = result.new_text.splitlines(keepends=True)
    assert all(line.endswith("\r\n") for line in lines)
    assert 'distributed_type: "NO"\r\n' in lines  # one device stays one device
    assert "mixed_precision: bf16\r\n" in lines and "fp16: true\r\n" not in lines
    assert not [line for line in lines if line.startswith("gpu_ids")]
    result = migrated(FIXTURES / "frameworks" / "accelerate_config_no_tpu_form.yaml")
    assert "  dynamo_backend: NO   # as fast as we could get it\n" in result.new_text


def test_accelerate_reads_the_migrated_config_as_its_tpu_form(tmp_path):
    """accelerate 1.15's own loader (what `accelerate launch --config_file` reads): XLA in bfloat16."""
    pytest.importorskip("accelerate")
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.utils import DistributedType

    config = tmp_path / "default_config.yaml"
    config.write_text(migrated(MULTI_GPU).new_text)
    loaded = load_config_from_file(str(config))
    assert loaded.distributed_type == DistributedType.XLA
    assert loaded.mixed_precision == "bf16" and loaded.gpu_ids is None and loaded.enable_cpu_affinity is False


def test_a_folder_gives_its_framework_configs_and_not_its_other_yaml(tmp_path, cli):
    project = tmp_path / "project"
    write(project / "configs" / "ddp.yaml", MULTI_GPU.read_text())
    write(project / ".github" / "workflows" / "ci.yml", "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
    write(project / "conf.yaml", "model:\n  distributed_type: MULTI_GPU  # nested: not accelerate's\n")
    write(project / "big.yaml", "distributed_type: MULTI_GPU\n" + "# padding\n" * 8000)  # 80 KB: not a config
    # a Hydra project's trainer group: the GPU's file is taken, the CPU's is not read
    write(project / "hydra" / "trainer" / "gpu.yaml", "defaults:\n  - default\n\naccelerator: gpu\ndevices: 1\n")
    write(project / "hydra" / "trainer" / "cpu.yaml", "defaults:\n  - default\n\naccelerator: cpu\n")
    result = cli("--check", "--format", "json", str(project))
    report = json.loads(result.stdout)
    assert sorted(Path(f["path"]).name for f in report["files"]) == ["ddp.yaml", "gpu.yaml"]
    assert result.exit_code == 1 and report["files"][0]["changed"]


def test_check_diff_and_write_behave_as_for_python(tmp_path, cli):
    config = write(tmp_path / "default_config.yaml", MULTI_GPU.read_text())
    config.chmod(0o640)
    before = config.read_bytes()
    check = cli("--check", str(config))
    assert check.exit_code == 1 and f"{config}:4:1: XLA827 `distributed_type: MULTI_GPU` -> " in check.stdout
    diff = cli("--diff", str(config))
    assert diff.exit_code == 1 and "-distributed_type: MULTI_GPU\n+distributed_type: XLA\n" in diff.stdout
    assert config.read_bytes() == before  # neither wrote anything
    assert cli(str(config)).exit_code == 1
    assert "distributed_type: XLA\n" in config.read_text() and stat.S_IMODE(config.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["default_config.yaml"]  # no temporary file left
    assert cli(str(config)).exit_code == 0  # a fixpoint


def test_other_yaml_named_explicitly_is_left_unread(tmp_path, cli):
    """pre-commit names every staged YAML file: those that are not Accelerate's pass untouched,
    even when they are not UTF-8."""
    other = write(tmp_path / ".pre-commit-config.yaml", "repos: []\n")
    latin = write(tmp_path / "names.yml", b"name: Jos\xe9\n")
    result = cli(str(other), str(latin))
    assert result.exit_code == 0, result.output
    assert other.read_text() == "repos: []\n" and latin.read_bytes() == b"name: Jos\xe9\n"


def test_a_config_that_cannot_be_decoded_is_an_error_and_left_as_it_was(tmp_path, cli):
    data = b"distributed_type: MULTI_GPU\nmixed_precision: fp16\nuser: Jos\xe9\n"
    config = write(tmp_path / "default_config.yaml", data)
    result = cli(str(config))
    assert result.exit_code == 2
    assert f"{config}: error: cannot decode as utf-8" in result.stderr and "PEP 263" not in result.stderr
    assert config.read_bytes() == data


def test_ignore_and_per_file_ignores_leave_the_config(tmp_path, cli):
    config = write(tmp_path / "default_config.yaml", MULTI_GPU.read_text())
    assert cli("--check", "--ignore", "XLA827", str(config)).exit_code == 0
    assert cli("--check", "--select", "XLA826", str(config)).exit_code == 0
    write(tmp_path / "pyproject.toml", '[tool.xla-migrate.per-file-ignores]\n"*.yaml" = ["XLA8"]\n')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli("--check", "default_config.yaml").exit_code == 0
    finally:
        os.chdir(cwd)


def test_suppression_comments_leave_a_line_or_the_file(tmp_path):
    line = write(tmp_path / "a.yaml", "distributed_type: MULTI_GPU\nmixed_precision: fp16  # noqa: XLA827\n")
    result = migrated(line)
    assert result.new_text == "distributed_type: XLA\nmixed_precision: fp16  # noqa: XLA827\n"
    assert [d.line for d in result.suppressed] == [2]
    whole = write(tmp_path / "b.yaml", "# xla-migrate: noqa: XLA8\ndistributed_type: MULTI_GPU\n")
    result = migrated(whole)
    assert result.new_text == result.source.text and not result.diagnostics and len(result.suppressed) == 1


def test_under_torch_tpu_a_gpu_config_is_flagged_not_converted(tmp_path):
    result = migrated(MULTI_GPU, runtime="torch-tpu")
    assert [(d.line, d.fixed) for d in result.diagnostics] == [(4, False)]
    assert "knows no TorchTPU device" in result.diagnostics[0].message
    assert result.new_text == result.source.text.replace(
        "distributed_type: MULTI_GPU\n",
        f"# TODO(xla-migrate): XLA827 {result.diagnostics[0].message}\ndistributed_type: MULTI_GPU\n",
    )
