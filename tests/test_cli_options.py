"""Choosing what a run does: rule selection, ``--target`` and ``--unsafe-fixes``, jobs and the
process pool, exit codes, the subcommands and the help."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from cli_helpers import CLEAN, FINDING, FIXABLE, TODO, UNFIXABLE, is_migrated, run, snapshot
from conftest import write
from migrate_xla.app import project as project_module
from migrate_xla.engine import registry

# -- rule selection --------------------------------------------------------------------


def test_select_a_family(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    assert cli("--select", "XLA1", str(path)).exit_code == 1
    assert is_migrated(path.read_text())


def test_select_one_rule_changes_only_what_it_covers(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    assert cli("--select", "XLA101", str(path)).exit_code == 1
    text = path.read_text()
    assert "device = torch_xla.device()" in text
    assert "x = torch.ones(2).cuda()" in text


def test_ignore_one_rule(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    assert cli("--ignore", "XLA103", str(path)).exit_code == 1
    text = path.read_text()
    assert "device = torch_xla.device()" in text
    assert "x = torch.ones(2).cuda()" in text


def test_select_takes_comma_separated_codes_case_insensitively(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli("--check", "--select", "xla101,XLA103", str(path))
    assert sorted(FINDING.match(line)["code"] for line in result.stdout.splitlines()) == ["XLA101", "XLA103"]


def test_selecting_a_family_without_matches_changes_nothing(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    assert cli("--select", "XLA3", str(path)).exit_code == 0
    assert path.read_text() == FIXABLE


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_rule_prefix_is_a_usage_error(tmp_path, cli, option):
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli(option, "XLA99", str(path))
    assert result.exit_code == 2
    assert "unknown rule code or prefix: XLA99" in result.stderr
    assert path.read_text() == FIXABLE


def test_unsafe_fixes_and_target_are_accepted(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    assert cli("--unsafe-fixes", "--target", "single", str(path)).exit_code == 1
    assert is_migrated(path.read_text())
    assert cli("--target", "gpu", str(path)).exit_code == 2


MAIN_SCRIPT = """import torch


def main():
    model = torch.nn.Linear(2, 2).cuda()
    model(torch.randn(4, 2).cuda()).sum().backward()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "target, expected",
    [("single", None), ("multiprocess", "torch_xla.launch(_mp_fn)"), ("spmd", "xr.use_spmd()")],
)
def test_target_enables_its_own_rules_only(tmp_path, cli, target, expected):
    path = write(tmp_path / "train.py", MAIN_SCRIPT)
    assert cli("--target", target, str(path)).exit_code == 1
    migrated = path.read_text()
    assert is_migrated(migrated)
    for form in ("torch_xla.launch(_mp_fn)", "xr.use_spmd()"):
        assert (form in migrated) == (form == expected)
    assert cli("--target", target, "--check", str(path)).exit_code == 0  # idempotent


def test_unsafe_fixes_reach_the_engine(tmp_path, cli, monkeypatch):
    seen = []
    real = project_module.migrate_files

    def spy(files, settings, jobs=None):
        seen.append(settings)
        return real(files, settings, jobs)

    monkeypatch.setattr(project_module, "migrate_files", spy)
    write(tmp_path / "train.py", CLEAN)
    cli("--unsafe-fixes", "--target", "single", str(tmp_path))
    cli(str(tmp_path))
    assert [(o.unsafe_fixes, o.target) for o in seen] == [(True, "single"), (False, "single")]


# -- jobs --------------------------------------------------------------------------------


def test_one_and_two_jobs_give_identical_results(tmp_path):
    texts = [
        FIXABLE,
        CLEAN,
        UNFIXABLE,
        FIXABLE.replace("ones", "zeros"),
        "import torch\nt = torch.ones(1).pin_memory()\n",
    ]
    for name in ("one", "two"):
        for i, text in enumerate(texts * 2):
            write(tmp_path / name / f"pkg{i % 3}" / f"m{i}.py", text)
    one = run("-j", "1", ".", cwd=tmp_path / "one")
    two = run("-j", "2", ".", cwd=tmp_path / "two")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout and one.stderr == two.stderr  # same findings, in the same order
    assert snapshot(tmp_path / "one") == snapshot(tmp_path / "two")
    assert is_migrated((tmp_path / "two" / "pkg0" / "m0.py").read_text())


def test_jobs_must_be_positive(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    assert cli("-j", "0", str(tmp_path)).exit_code == 2
    assert (tmp_path / "train.py").read_text() == FIXABLE


def test_thousands_of_files_with_a_process_pool(tmp_path):
    count = 3000
    for i in range(count):
        text = "import torch\nt = torch.zeros(3).pin_memory()\n" if i % 2 == 0 else f"x = {i}\n"
        write(tmp_path / f"d{i // 100}" / f"f{i}.py", text)
    start = time.perf_counter()
    result = run("-j", "2", ".", cwd=tmp_path)
    elapsed = time.perf_counter() - start
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"{count // 2} of {count} files migrated".encode() in result.stderr
    assert sum(".pin_memory()" in p.read_text() for p in tmp_path.rglob("*.py")) == 0
    assert elapsed < 60, f"{count} files took {elapsed:.1f} s"


# -- exit codes ------------------------------------------------------------------------


def test_exit_zero_turns_1_into_0(tmp_path, cli):
    path = write(tmp_path / "streams.py", UNFIXABLE)
    assert cli("--exit-zero", str(path)).exit_code == 0
    assert path.read_text().count(TODO) == 1  # it still did the work
    assert cli("--exit-zero", "--check", str(path)).exit_code == 0


def test_exit_zero_keeps_2(tmp_path, cli):
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    assert cli("--exit-zero", str(tmp_path)).exit_code == 2
    assert cli("--exit-zero", str(tmp_path / "missing.py")).exit_code == 2
    assert cli("--exit-zero", "--select", "NOPE", str(tmp_path)).exit_code == 2


def test_missing_path_is_exit_2_and_nothing_is_written(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli(str(path), str(tmp_path / "missing.py"))
    assert result.exit_code == 2
    assert "no such file or directory" in result.stderr and "missing.py" in result.stderr
    assert path.read_text() == FIXABLE


@pytest.mark.parametrize("args", [("--check",), ("migrate", "--diff")])
def test_no_path_is_nothing_to_do(cli, args):
    # pre-commit calls a hook without file names when none matches and the hook must run anyway
    result = cli(*args)
    assert result.exit_code == 0
    assert "no paths given, nothing to do" in result.stderr and result.stdout == ""
    assert cli(*args, "-q").output == ""


# -- subcommands -----------------------------------------------------------------------


def test_rules_lists_every_rule_code(cli):
    result = cli("rules")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert listed == [rule.CODE for rule in registry.all_rules()]
    assert "XLA899" in listed and "XLA101" in listed


def test_explain_prints_what_why_before_and_after(cli):
    rule = registry.by_code("XLA101")
    result = cli("explain", "XLA101")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"XLA101 ({rule.NAME}): {rule.SUMMARY}")
    assert rule.why().splitlines()[0] in result.stdout  # the why, from the rule's docstring
    before, after = result.stdout.split("Before:\n")[1].split("After:\n")
    assert all(f"    {line}" in before for line in rule.BEFORE.strip().splitlines())
    assert all(f"    {line}" in after for line in rule.AFTER.strip().splitlines())
    assert cli("explain", "xla101").stdout == result.stdout
    assert cli("explain", rule.NAME).stdout == result.stdout


def test_explain_unknown_code_exits_2(cli):
    result = cli("explain", "XLA999")
    assert result.exit_code == 2
    assert "unknown rule: XLA999" in result.stderr


def test_verify_is_a_subcommand_and_the_rewriter_imports_no_torch(tmp_path):
    script = "import sys, migrate_xla.app.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_xla')))"
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout == "[]\n"
    help_text = run("verify", "--help", cwd=tmp_path)
    assert help_text.returncode == 0
    assert b"verify [OPTIONS] SCRIPT" in help_text.stdout and b"--reference" in help_text.stdout


def test_top_level_help_lists_the_everyday_options_and_the_commands(cli):
    result = cli("--help")
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: main [OPTIONS] PATH...\n")
    for option in ("--diff", "--check", "--output", "--select", "--ignore", "--unsafe-fixes", "--target", "--format"):
        assert re.search(rf"^  (-\w, )?{option}\b", result.stdout, re.M), option
    for option in ("--exclude", "--stats", "--quiet", "--exit-zero", "--jobs", "--version", "--help"):
        assert re.search(rf"^  (-\w, )?{option}\b", result.stdout, re.M), option
    commands = result.stdout.split("Commands:\n")[1]
    assert [line.split()[0] for line in commands.splitlines()] == [
        "explain",
        "migrate",
        "rules",
        "tpu-report",
        "verify",
    ]


def test_bare_command_prints_the_usage(cli):
    result = cli()
    assert result.exit_code == 0  # pre-commit calls a hook so (always_run, no file staged): it must pass
    assert result.stdout == cli("--help").stdout and result.stderr == ""
