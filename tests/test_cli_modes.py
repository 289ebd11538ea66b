"""How a run writes: in place (the default), ``--diff``, ``--check``, ``-o DIR``, and stdin to stdout."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from cli_helpers import CLEAN, FINDING, FIXABLE, TODO, UNFIXABLE, is_migrated, run, snapshot
from conftest import write

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
