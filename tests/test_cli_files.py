"""Which files a run reads and how it writes them: folder walks and symlinks; unreadable,
undecodable, read-only and odd files reported while the others go on; encodings, newlines and
indentation kept; files that change during the run; Ctrl-C; input that Python itself rejects."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import CLEAN, FIXABLE, TODO, UNFIXABLE, is_migrated, make_unreadable, snapshot
from conftest import make_repo, write
from migrate_xla.app import project as project_module

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
