"""The command line as a user meets it: options, exit codes, output streams, bad input.

Most tests run the CLI in-process (the ``cli`` fixture); a few run the real console
entry point in a subprocess, where stream separation, stdin and the process pool matter.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from conftest import make_repo, write
from migrate_xla.app import project as project_module
from migrate_xla.engine import registry

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


# -- in place (the default) ------------------------------------------------------------


def test_in_place_rewrites_then_a_second_run_changes_nothing(tmp_path):
    path = write(tmp_path / "train.py", FIXABLE)
    first = run("train.py", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    migrated = path.read_bytes()
    assert is_migrated(migrated.decode())
    assert first.stdout == b""  # everything was fixed: no finding left to print
    assert b"1 of 1 file migrated" in first.stderr

    second = run("train.py", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert path.read_bytes() == migrated
    assert second.stdout == b"" and second.stderr == b""


def test_clean_file_exits_0_and_is_not_touched(tmp_path, cli):
    path = write(tmp_path / "clean.py", CLEAN)
    before = path.stat().st_mtime_ns
    result = cli(str(path))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert path.read_text() == CLEAN and path.stat().st_mtime_ns == before


def test_unfixable_finding_gets_one_todo_and_keeps_exit_1(tmp_path, cli):
    path = write(tmp_path / "streams.py", UNFIXABLE)
    first = cli(str(path))
    assert first.exit_code == 1
    flagged = path.read_text()
    assert flagged.count(TODO) == 1
    assert "XLA899" in first.stdout  # an error-level finding left for a person is printed
    second = cli(str(path))
    assert second.exit_code == 1  # it still needs a person
    assert path.read_text() == flagged  # no second comment
    assert [FINDING.match(line)["code"] for line in second.stdout.splitlines()] == ["XLA899"]


def test_file_mode_is_kept_after_rewrite(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    path.chmod(0o755)
    assert cli(str(path)).exit_code == 1
    assert is_migrated(path.read_text())
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_remaining_findings_point_at_the_written_file(tmp_path, cli):
    # engine bug (reported): positions are those of the original text, so after a
    # rewrite that added imports above, path:line points at the wrong line
    path = write(tmp_path / "train.py", 'import torch\ndevice = torch.device("cuda")\ns = torch.cuda.Stream()\n')
    result = cli(str(path))
    assert result.exit_code == 1
    (finding,) = [FINDING.match(line) for line in result.stdout.splitlines()]
    written = path.read_text().splitlines()
    assert "torch.cuda.Stream" in written[int(finding["line"]) - 1]  # the statement or its TODO comment


# -- --diff and --check ---------------------------------------------------------------


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "clean.py", CLEAN)
    before = snapshot(tmp_path)
    result = run("--diff", ".", cwd=tmp_path)
    assert result.returncode == 1
    diff = result.stdout.decode()
    assert diff.startswith("--- a/train.py\n+++ b/train.py\n@@ ")
    assert '-device = torch.device("cuda")\n' in diff and "+import torch_xla\n" in diff
    assert "clean.py" not in diff
    assert "XLA101" in result.stderr.decode()  # findings go to stderr: stdout is a clean patch
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "text",
    [FIXABLE.rstrip("\n"), FIXABLE.replace("\n", "\r\n"), "import torch\n\x0c\n" + FIXABLE.split("\n", 1)[1]],
    ids=["no-final-newline", "crlf", "form-feed"],
)
def test_diff_is_a_valid_patch(tmp_path, cli, monkeypatch, text):
    if shutil.which("patch") is None:
        pytest.skip("no patch(1) here")
    for folder in ("patched", "rewritten"):
        write(tmp_path / folder / "a.py", text)
        write(tmp_path / folder / "b.py", FIXABLE)  # a second diff after the first: headers must not run together
    monkeypatch.chdir(tmp_path / "patched")
    result = cli("--diff", ".")
    assert result.exit_code == 1
    subprocess.run(["patch", "-p1", "-s", "--binary"], input=result.stdout_bytes, check=True)
    assert cli(str(tmp_path / "rewritten")).exit_code == 1
    assert snapshot(tmp_path / "patched") == snapshot(tmp_path / "rewritten")  # byte for byte
    assert is_migrated((tmp_path / "patched" / "a.py").read_text())


def test_diff_of_clean_files_is_empty_and_exits_0(tmp_path, cli):
    write(tmp_path / "clean.py", CLEAN)
    result = cli("--diff", str(tmp_path))
    assert result.exit_code == 0
    assert result.stdout == ""


def test_check_prints_findings_and_writes_nothing(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "streams.py", UNFIXABLE)
    write(tmp_path / "clean.py", CLEAN)
    before = snapshot(tmp_path)
    result = cli("--check", str(tmp_path))
    assert result.exit_code == 1
    findings = [FINDING.match(line) for line in result.stdout.splitlines()]
    assert all(findings), result.stdout
    assert {(Path(m["path"]).name, m["code"]) for m in findings} == {
        ("train.py", "XLA101"),
        ("train.py", "XLA103"),
        ("streams.py", "XLA899"),
    }
    device = next(m for m in findings if m["code"] == "XLA101")
    assert (device["line"], device["col"]) == ("2", "10")  # where torch.device("cuda") is
    assert snapshot(tmp_path) == before


def test_check_of_clean_files_prints_nothing_and_exits_0(tmp_path, cli):
    write(tmp_path / "clean.py", CLEAN)
    result = cli("--check", str(tmp_path))
    assert result.exit_code == 0
    assert result.stdout == ""


@pytest.mark.parametrize("options", [["--diff", "--check"], ["--diff", "-o", "out"], ["--check", "-o", "out"]])
def test_exclusive_modes_are_a_usage_error(tmp_path, cli, options):
    write(tmp_path / "train.py", FIXABLE)
    result = cli(*options, str(tmp_path / "train.py"))
    assert result.exit_code == 2
    assert "exclude each other" in result.stderr
    assert (tmp_path / "train.py").read_text() == FIXABLE


# -- -o DIR ----------------------------------------------------------------------------


def test_output_dir_mirrors_the_tree_and_leaves_originals(tmp_path, cli):
    src = tmp_path / "src"
    write(src / "pkg" / "train.py", FIXABLE).chmod(0o755)
    write(src / "clean.py", CLEAN)
    write(src / "notes.txt", "not python\n")
    before = snapshot(src)
    result = cli("-o", str(tmp_path / "out"), str(src))
    assert result.exit_code == 1
    assert snapshot(src) == before
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["clean.py", "pkg/train.py"]
    assert is_migrated((out / "pkg" / "train.py").read_text())
    assert (out / "clean.py").read_text() == CLEAN  # the copy is complete, not only what changed
    assert stat.S_IMODE((out / "pkg" / "train.py").stat().st_mode) == 0o755


def test_output_dir_inside_the_tree_is_not_walked(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    out = tmp_path / "migrated"
    for _ in range(2):
        result = cli("-o", str(out), str(tmp_path))
        assert result.exit_code == 1
        assert "1 of 1 file migrated" in result.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.py")) == [
        "migrated/train.py",
        "train.py",
    ]
    assert (tmp_path / "train.py").read_text() == FIXABLE


def test_output_for_a_file_argument_lands_directly_under_dir(tmp_path, cli):
    write(tmp_path / "src" / "deep" / "train.py", FIXABLE)
    assert cli("-o", str(tmp_path / "out"), str(tmp_path / "src" / "deep" / "train.py")).exit_code == 1
    assert is_migrated((tmp_path / "out" / "train.py").read_text())


def test_output_for_a_symlink_to_elsewhere_goes_where_the_link_is(tmp_path, cli):
    real = write(tmp_path / "elsewhere" / "real.py", FIXABLE)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "link.py").symlink_to(real)
    assert cli("-o", str(tmp_path / "out"), str(tmp_path / "proj" / "link.py")).exit_code == 1
    copy = tmp_path / "out" / "link.py"
    assert not copy.is_symlink() and is_migrated(copy.read_text())
    assert real.read_text() == FIXABLE


def test_output_collision_is_refused_before_anything_is_written(tmp_path, cli):
    write(tmp_path / "a" / "train.py", FIXABLE)
    write(tmp_path / "b" / "train.py", UNFIXABLE)
    result = cli("-o", str(tmp_path / "out"), str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.exit_code == 2
    assert "would both be written to" in result.stderr
    assert not (tmp_path / "out").exists()


def test_output_dir_that_would_overwrite_inputs_is_refused(tmp_path, cli):
    path = write(tmp_path / "src" / "train.py", FIXABLE)
    result = cli("-o", str(tmp_path / "src"), str(tmp_path / "src"))
    assert result.exit_code == 2
    assert "would overwrite the input" in result.stderr
    assert path.read_text() == FIXABLE


def test_output_dir_above_the_argument_is_fine(tmp_path, cli):
    path = write(tmp_path / "src" / "pkg" / "train.py", FIXABLE)
    assert cli("-o", str(tmp_path), str(tmp_path / "src")).exit_code == 1
    assert path.read_text() == FIXABLE
    assert is_migrated((tmp_path / "pkg" / "train.py").read_text())


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


# -- output formats ------------------------------------------------------------------


def test_json_format_follows_the_documented_schema(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "streams.py", UNFIXABLE)
    write(tmp_path / "clean.py", CLEAN)
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    result = cli("--check", "--format", "json", str(tmp_path))
    assert result.exit_code == 2
    report = json.loads(result.stdout)  # the whole stdout is one JSON document
    assert set(report) >= {"files", "summary"}
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    assert set(by_name) == {"train.py", "streams.py", "clean.py", "broken.py"}
    for entry in report["files"]:
        assert set(entry) >= {"path", "changed", "diagnostics"}
        for d in entry["diagnostics"]:
            assert set(d) >= {"code", "message", "line", "column", "severity", "fixed"}
            assert isinstance(d["line"], int) and isinstance(d["column"], int) and isinstance(d["fixed"], bool)
            assert d["severity"] in ("error", "warning", "info")
    assert by_name["train.py"]["changed"] is True
    assert {d["code"] for d in by_name["train.py"]["diagnostics"]} == {"XLA101", "XLA103"}
    assert all(d["fixed"] for d in by_name["train.py"]["diagnostics"])
    (stream,) = by_name["streams.py"]["diagnostics"]
    assert (stream["code"], stream["severity"], stream["fixed"], stream["line"]) == ("XLA899", "error", False, 2)
    assert by_name["clean.py"] == {"path": by_name["clean.py"]["path"], "changed": False, "diagnostics": []}
    assert "line 2" in by_name["broken.py"]["error"]
    summary = report["summary"]
    assert (summary["files"], summary["changed"], summary["errors"], summary["remaining_errors"]) == (4, 2, 1, 1)


def test_json_format_in_write_mode_reports_what_was_written(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli("--format", "json", str(path))
    assert result.exit_code == 1
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["changed"] is True and is_migrated(path.read_text())


def test_sarif_format_is_valid_sarif(tmp_path, cli):
    write(tmp_path / "streams.py", UNFIXABLE)
    result = cli("--check", "--format", "sarif", str(tmp_path))
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["XLA899"]
    (finding,) = run_["results"]
    assert finding["ruleId"] == "XLA899" and finding["level"] == "error"
    location = finding["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("streams.py")
    assert location["region"] == {"startLine": 2, "startColumn": 1}


def test_github_format_prints_annotations(tmp_path, cli):
    write(tmp_path / "streams.py", UNFIXABLE)
    result = cli("--check", "--format", "github", str(tmp_path))
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    assert re.match(r"^::error title=xla-migrate \(XLA899\),file=[^,]*streams\.py,line=2,col=1::.*XLA899 ", line)


def test_stats_counts_per_rule_and_per_file(tmp_path, cli):
    write(tmp_path / "a.py", FIXABLE)
    write(tmp_path / "b.py", FIXABLE.replace("x =", "y = torch.zeros(1).cuda()\nx ="))
    write(tmp_path / "c.py", CLEAN)
    result = cli("--check", "--stats", str(tmp_path))
    lines = result.stdout.splitlines()
    by_rule = lines[lines.index("Findings by rule:") + 1 : lines.index("Findings by file:")]
    by_file = lines[lines.index("Findings by file:") + 1 :]
    assert [(line.split()[0], line.split()[1]) for line in by_rule] == [("2", "XLA101"), ("3", "XLA103")]
    assert [(line.split()[0], Path(line.split()[1]).name) for line in by_file] == [("3", "b.py"), ("2", "a.py")]


def test_stats_in_json(tmp_path, cli):
    write(tmp_path / "a.py", FIXABLE)
    report = json.loads(cli("--check", "--stats", "--format", "json", str(tmp_path)).stdout)
    assert {row["code"]: row["count"] for row in report["stats"]["rules"]} == {"XLA101": 1, "XLA103": 1}
    assert [row["count"] for row in report["stats"]["files"]] == [2]


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_stats_with_sarif_or_github_is_a_usage_error(tmp_path, cli, fmt):
    # as ruff's --statistics: these formats have no place for counts, so --stats is refused, not dropped
    path = write(tmp_path / "a.py", FIXABLE)
    for mode in ("--check", "--exit-zero"):
        result = cli(mode, "--stats", "--format", fmt, str(path))
        assert result.exit_code == 2
        assert f"--stats works with --format text or json, not {fmt}" in result.stderr
        assert result.stdout == ""
    assert path.read_text() == FIXABLE


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


# -- stdin -------------------------------------------------------------------------------


def test_stdin_to_stdout_with_findings_on_stderr(tmp_path):
    result = run("-", cwd=tmp_path, input=(FIXABLE + UNFIXABLE.split("\n", 1)[1]).encode())
    assert result.returncode == 1
    code = result.stdout.decode()
    compile(code, "<stdout>", "exec")  # stdout is only the code
    assert "device = torch_xla.device()\n" in code
    assert code.count(TODO) == 1
    assert re.search(r"^-:\d+:\d+: XLA899 ", result.stderr.decode(), re.M)
    assert list(tmp_path.iterdir()) == []  # a filter writes no file


def test_stdin_clean_passes_through_with_exit_0(cli):
    result = cli("-", input=CLEAN)
    assert (result.exit_code, result.stdout, result.stderr) == (0, CLEAN, "")


def test_stdin_keeps_crlf_and_bom(cli):
    data = b"\xef\xbb\xbf" + FIXABLE.replace("\n", "\r\n").encode()
    result = cli("-", input=data)
    assert result.exit_code == 1
    assert result.stdout_bytes.startswith(b"\xef\xbb\xbfimport torch\r\n")
    assert b"\n" not in result.stdout_bytes.replace(b"\r\n", b"")
    assert is_migrated(result.stdout_bytes.decode("utf-8-sig"))


def test_stdin_with_diff_and_check(cli):
    diff = cli("--diff", "-", input=FIXABLE)
    assert diff.exit_code == 1
    assert diff.stdout.startswith("--- a/-\n+++ b/-\n")
    check = cli("--check", "-", input=UNFIXABLE)
    assert check.exit_code == 1
    assert re.match(r"^-:2:1: XLA899 ", check.stdout)
    assert cli("--check", "-", input=CLEAN).exit_code == 0


def test_stdin_syntax_error_gives_the_input_back_and_exits_2(tmp_path):
    data = b"import torch\ndef f(:\n    torch.cuda.synchronize()\n"
    result = run("-", cwd=tmp_path, input=data)
    assert result.returncode == 2
    assert result.stdout == data
    assert b"-: error: cannot parse: line 2" in result.stderr


def test_stdin_undecodable_exits_2(cli):
    data = b"import torch\nx = '\xff'\ntorch.cuda.synchronize()\n"
    result = cli("-", input=data)
    assert result.exit_code == 2
    assert result.stdout_bytes == data
    assert "-: error: cannot decode as utf-8" in result.stderr


@pytest.mark.parametrize("extra", [["x.py"], ["-o", "out"]])
def test_stdin_with_paths_or_output_is_a_usage_error(tmp_path, cli, extra):
    write(tmp_path / "x.py", FIXABLE)
    result = cli(*extra, "-", input=FIXABLE)
    assert result.exit_code == 2
    assert "stdin" in result.stderr


# -- walking folders -----------------------------------------------------------------------


def test_folder_walk_honours_gitignore_and_default_excludes(tmp_path, cli):
    make_repo(tmp_path)
    write(tmp_path / ".gitignore", "generated/\n*_pb2.py\n")
    for name in [
        "src/train.py",
        "generated/g.py",
        "src/model_pb2.py",
        ".venv/lib/v.py",
        "src/__pycache__/c.py",
        "src/notes.md",
    ]:
        write(tmp_path / name, FIXABLE)
    before = snapshot(tmp_path)
    result = cli(str(tmp_path / "src"))  # the repository's .gitignore above the folder counts
    assert result.exit_code == 1
    after = snapshot(tmp_path)
    assert sorted(k for k in after if after[k] != before[k]) == ["src/train.py"]
    result = cli(str(tmp_path))
    assert result.exit_code == 0  # nothing else is walked into


def test_explicitly_named_ignored_file_is_processed(tmp_path, cli):
    write(tmp_path / ".gitignore", "*_pb2.py\n")
    path = write(tmp_path / "model_pb2.py", FIXABLE)
    assert cli(str(tmp_path)).exit_code == 0
    assert cli(str(path)).exit_code == 1
    assert is_migrated(path.read_text())


def test_symlink_named_explicitly_rewrites_its_target(tmp_path, cli):
    target = write(tmp_path / "real.py", FIXABLE)
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    assert cli(str(link)).exit_code == 1
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert is_migrated(target.read_text())


def test_symlink_met_while_walking_is_skipped(tmp_path, cli):
    outside = write(tmp_path / "outside" / "real.py", FIXABLE)
    tree = tmp_path / "tree"
    write(tree / "clean.py", CLEAN)
    (tree / "link.py").symlink_to(outside)
    (tree / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    assert cli(str(tree)).exit_code == 0
    assert outside.read_text() == FIXABLE  # nothing outside the given paths is written


# -- bad input ---------------------------------------------------------------------------

BAD_FILES = {
    "syntax.py": (b"import torch\ndef f(:\n    torch.cuda.synchronize()\n", "cannot parse: line 2"),
    "latin1_no_cookie.py": (b"import torch\nname = 'caf\xe9'\nd = torch.device('cuda')\n", "cannot decode as utf-8"),
    "first_line_bytes.py": (b"name = '\xff'\nimport torch\nd = torch.device('cuda')\n", "cannot decode as utf-8"),
    "bad_cookie.py": (b"# -*- coding: klingon -*-\nimport torch\nd = torch.device('cuda')\n", "coding"),
    "readonly.py": (FIXABLE.encode(), "read-only"),
}


def test_bad_files_are_reported_by_name_and_left_alone_while_others_go_on(tmp_path, cli):
    for name, (data, _) in BAD_FILES.items():
        write(tmp_path / name, data)
    (tmp_path / "readonly.py").chmod(0o444)
    good = write(tmp_path / "good.py", FIXABLE)
    before = snapshot(tmp_path)
    result = cli(str(tmp_path))
    assert result.exit_code == 2
    errors = {Path(line.split(": error: ")[0]).name: line for line in result.stderr.splitlines() if ": error: " in line}
    assert set(errors) == set(BAD_FILES)
    for name, (_, message) in BAD_FILES.items():
        assert message in errors[name], errors[name]
    assert "5 could not be read, parsed or written" in result.stderr
    assert "1 of 6 files migrated" in result.stderr  # the read-only file is not counted as migrated
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if k != "good.py"} == {k: v for k, v in before.items() if k != "good.py"}
    assert stat.S_IMODE((tmp_path / "readonly.py").stat().st_mode) == 0o444
    assert is_migrated(good.read_text())


def test_unreadable_folder_is_reported_and_the_others_go_on(tmp_path, cli, monkeypatch):
    good = write(tmp_path / "good.py", FIXABLE)
    locked = tmp_path / "locked"
    write(locked / "train.py", FIXABLE)
    make_unreadable(monkeypatch, locked)
    result = cli(str(tmp_path))
    assert result.exit_code == 2
    assert f"{locked}: error: cannot read folder: Permission denied; its files were not migrated" in result.stderr
    assert is_migrated(good.read_text())
    (entry,) = [f for f in json.loads(cli("--check", "--format", "json", str(locked)).stdout)["files"]]
    assert entry["path"] == str(locked) and "Permission denied" in entry["error"]


@pytest.mark.parametrize("name", ["secret.py", "locked/train.py"], ids=["file", "file-in-locked-folder"])
def test_unreadable_file_named_explicitly_is_reported_and_the_others_go_on(tmp_path, cli, monkeypatch, name):
    unreadable = write(tmp_path / name, FIXABLE)
    good = write(tmp_path / "good.py", FIXABLE)
    make_unreadable(monkeypatch, tmp_path / name.split("/")[0])
    result = cli(str(unreadable), str(good))
    assert result.exit_code == 2
    assert f"{unreadable}: error: cannot read: Permission denied" in result.stderr
    assert is_migrated(good.read_text())  # the run went on


def _without_permission_override() -> list[str] | None:
    """A command prefix that runs a process which file permissions stop (root is not stopped)."""
    if os.geteuid() != 0:
        return []
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]
    if shutil.which("setpriv") and subprocess.run([*drop, "--", "true"], capture_output=True).returncode == 0:
        return [*drop, "--"]
    return None


def test_unreadable_paths_for_real(tmp_path):
    prefix = _without_permission_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot stop this process")
    write(tmp_path / "locked" / "a.py", FIXABLE)
    write(tmp_path / "secret.py", FIXABLE)
    good = write(tmp_path / "ok" / "good.py", FIXABLE)
    (tmp_path / "locked").chmod(0)
    (tmp_path / "secret.py").chmod(0)
    try:
        for args in (["."], ["secret.py", "locked/a.py", "ok"], ["locked", "ok"]):
            command = [*prefix, sys.executable, "-m", "migrate_xla", "--check", *args]
            result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert result.returncode == 2, result.stderr
            assert "Traceback" not in result.stderr
            assert re.search(r"^ok/good\.py:2:10: XLA101 ", result.stdout, re.M), result.stdout  # the others go on
            errors = {line.split(": error: ")[0] for line in result.stderr.splitlines() if ": error: " in line}
            assert errors == {"secret.py", "locked/a.py"} if "secret.py" in args else errors >= {"locked"}
    finally:
        (tmp_path / "locked").chmod(0o755)
        (tmp_path / "secret.py").chmod(0o644)
    assert good.read_text() == FIXABLE


def test_read_only_file_is_not_counted_as_changed_in_json(tmp_path, cli):
    path = write(tmp_path / "readonly.py", FIXABLE)
    path.chmod(0o444)
    result = cli("--format", "json", str(path))
    assert result.exit_code == 2
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["changed"] is False and "read-only" in entry["error"]
    assert path.read_text() == FIXABLE


def test_null_bytes_are_reported_clearly(tmp_path, cli):
    # engine bug (reported): the message says "line None" on Python 3.11
    write(tmp_path / "nul.py", b"import torch\nx = torch.ones(2).cuda()\x00\n")
    result = cli(str(tmp_path / "nul.py"))
    assert result.exit_code == 2
    assert "null bytes" in result.stderr
    assert "None" not in result.stderr


def test_latin1_file_with_cookie_is_migrated_and_written_in_latin1(tmp_path, cli):
    data = b"# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\n" + FIXABLE.split("\n", 1)[1].encode()
    path = write(tmp_path / "latin.py", data)
    assert cli(str(path)).exit_code == 1
    written = path.read_bytes()
    assert written.startswith(b"# -*- coding: latin-1 -*-\n")
    assert b"name = 'caf\xe9'\n" in written
    assert is_migrated(written.decode("latin-1"))


def test_empty_file_is_fine(tmp_path, cli):
    path = write(tmp_path / "empty.py", b"")
    assert cli(str(path)).exit_code == 0
    assert path.read_bytes() == b""


def test_utf8_bom_is_kept(tmp_path, cli):
    path = write(tmp_path / "bom.py", b"\xef\xbb\xbf" + FIXABLE.encode())
    assert cli(str(path)).exit_code == 1
    written = path.read_bytes()
    assert written.startswith(b"\xef\xbb\xbfimport torch\n") and written.count(b"\xef\xbb\xbf") == 1
    assert is_migrated(written.decode("utf-8-sig"))


def test_crlf_newlines_are_kept_also_on_added_lines(tmp_path, cli):
    path = write(tmp_path / "crlf.py", FIXABLE.replace("\n", "\r\n"))
    assert cli(str(path)).exit_code == 1
    written = path.read_bytes()
    assert b"import torch_xla\r\n" in written
    assert b"\n" not in written.replace(b"\r\n", b""), written  # no bare LF anywhere
    assert is_migrated(written.decode())
    assert cli(str(path)).exit_code == 0  # and the second run agrees


def test_crlf_newlines_are_kept_on_todo_comments(tmp_path, cli):
    path = write(tmp_path / "crlf.py", UNFIXABLE.replace("\n", "\r\n"))
    assert cli(str(path)).exit_code == 1
    written = path.read_bytes()
    assert TODO.encode() in written
    assert b"\n" not in written.replace(b"\r\n", b""), written


def test_tab_indentation_is_kept(tmp_path, cli):
    path = write(
        tmp_path / "tabs.py", 'import torch\nif True:\n\tdevice = torch.device("cuda")\n\tx = torch.ones(2).cuda()\n'
    )
    assert cli(str(path)).exit_code == 1
    text = path.read_text()
    assert "\tdevice = torch_xla.device()\n" in text
    assert "\tx = torch.ones(2).to(torch_xla.device())\n" in text
    assert "    " not in text


def test_file_removed_during_the_run_is_reported_and_others_written(tmp_path, cli, monkeypatch):
    doomed = write(tmp_path / "a.py", FIXABLE)
    other = write(tmp_path / "b.py", FIXABLE)
    real = project_module.migrate_files

    def remove_after_reading(files, settings, jobs=None):
        for result in real(files, settings, 1):
            if result.path == str(doomed):
                doomed.unlink()  # a checkout switched branches while we worked
            yield result

    monkeypatch.setattr(project_module, "migrate_files", remove_after_reading)
    result = cli(str(tmp_path))
    assert result.exit_code == 2
    assert f"{doomed}: error: file was removed during the run; not written" in result.stderr
    assert not doomed.exists()
    assert is_migrated(other.read_text())


def test_file_edited_during_the_run_is_not_overwritten(tmp_path, cli, monkeypatch):
    path = write(tmp_path / "a.py", FIXABLE)
    real = project_module.migrate_files

    def edit_after_reading(files, settings, jobs=None):
        for result in real(files, settings, 1):
            path.write_text("edited = True\n")
            os.utime(path, ns=(time.time_ns() + 10**9,) * 2)
            yield result

    monkeypatch.setattr(project_module, "migrate_files", edit_after_reading)
    result = cli(str(path))
    assert result.exit_code == 2
    assert "changed during the run" in result.stderr
    assert path.read_text() == "edited = True\n"


def test_no_temporary_files_are_left_behind(tmp_path, cli):
    names = {f"m{i}.py" for i in range(6)}
    for i, name in enumerate(sorted(names)):
        write(tmp_path / name, [FIXABLE, UNFIXABLE, CLEAN][i % 3])
    write(tmp_path / "ro.py", FIXABLE).chmod(0o444)
    cli(str(tmp_path))
    cli("-o", str(tmp_path / "out"), str(tmp_path))
    assert {p.name for p in tmp_path.iterdir()} == names | {"ro.py", "out"}
    assert {p.name for p in (tmp_path / "out").iterdir()} == names | {"ro.py"}


# -- interrupted --------------------------------------------------------------------------


def test_ctrl_c_exits_130_and_the_write_in_progress_is_not_half_done(tmp_path, cli, monkeypatch):
    first = write(tmp_path / "a.py", FIXABLE)
    second = write(tmp_path / "b.py", FIXABLE)
    real_replace = os.replace
    calls = []

    def interrupted_replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # Ctrl-C while the second file is being written
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted_replace)
    result = cli("-j", "1", str(tmp_path))
    assert result.exit_code == 130  # not 1, "files changed"
    assert "xla-migrate: interrupted; each file is written whole or left as it was" in result.stderr
    assert is_migrated(first.read_text())
    assert second.read_text() == FIXABLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]  # no temporary file left


INTERRUPT_AFTER_FIRST = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell's background job starts with SIGINT ignored
import migrate_xla.app.cli as cli, migrate_xla.app.project as project
real = project.migrate_files
def migrate_files(files, settings, jobs=None):
    for result in real(files, settings, 1):
        yield result
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C once the first file is done
project.migrate_files = migrate_files
sys.argv[0] = "xla-migrate"
cli.main()
"""


def test_sigint_exits_130_with_a_short_message(tmp_path):
    first = write(tmp_path / "a.py", FIXABLE)
    second = write(tmp_path / "b.py", FIXABLE)
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPT_AFTER_FIRST, "."], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 130
    assert result.stderr.strip() == "xla-migrate: interrupted; each file is written whole or left as it was"
    assert is_migrated(first.read_text()) and second.read_text() == FIXABLE


# -- habits of ruff users ------------------------------------------------------------------


def test_quiet_prints_findings_and_errors_but_no_summary(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "streams.py", UNFIXABLE)
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    loud = cli("--check", str(tmp_path))
    assert "files would be migrated" in loud.stderr
    quiet = cli("--check", "-q", str(tmp_path))
    assert quiet.exit_code == loud.exit_code == 2
    assert quiet.stdout == loud.stdout and "XLA899" in quiet.stdout  # the same findings
    (error,) = quiet.stderr.splitlines()  # the error, and not the closing line
    assert error.startswith(f"{tmp_path / 'broken.py'}: error: cannot parse: line 2")
    assert cli("--quiet", str(tmp_path)).stderr.splitlines() == quiet.stderr.splitlines()


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


def run_on_a_terminal(*args: str, cwd: Path, **env: str) -> str:
    """The console entry point with stdout and stderr on a pseudo-terminal; what it printed."""
    import pty

    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "migrate_xla", *args], cwd=cwd, stdout=follower, stderr=follower, env={**environ, **env}
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_off_with_no_color_or_a_pipe(tmp_path):
    write(tmp_path / "streams.py", UNFIXABLE)
    coloured = run_on_a_terminal("--check", "streams.py", cwd=tmp_path)
    assert click.style("XLA899", fg="red", bold=True) in coloured
    assert click.style("streams.py", bold=True) + ":2:1:" in coloured
    plain = run_on_a_terminal("--check", "streams.py", cwd=tmp_path, NO_COLOR="1")
    assert "\x1b[" not in plain and "streams.py:2:1: XLA899 " in plain
    piped = run("--check", "streams.py", cwd=tmp_path)
    assert piped.stdout.startswith(b"streams.py:2:1: XLA899 ") and b"\x1b[" not in piped.stdout + piped.stderr


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


def test_input_python_itself_rejects_is_cannot_parse(cli, tmp_path):
    """LibCST parses 500 nested parentheses; CPython refuses more than 200: not an internal error."""
    script = tmp_path / "deep.py"
    script.write_text("import torch\nx = " + "(" * 500 + "torch.ones(1).cuda()" + ")" * 500 + "\n")
    before = script.read_bytes()
    result = cli(str(script))
    assert result.exit_code == 2
    assert "cannot parse: line 2" in result.output and "too many nested parentheses" in result.output
    assert "internal error" not in result.output
    assert script.read_bytes() == before


def test_a_valid_deeply_nested_expression_is_migrated(cli, tmp_path):
    """A 500-term sum is a tree 500 levels deep: past Python's recursion limit for LibCST's walks."""
    script = tmp_path / "long_sum.py"
    script.write_text("import torch\na = torch.ones(1)\nb = " + " + ".join(["a"] * 500) + " + a.cuda()\n")
    result = cli(str(script))
    assert result.exit_code == 1, result.output
    assert script.read_text().rstrip().endswith("+ a.to(torch_xla.device())")
    compile(script.read_text(), str(script), "exec")
