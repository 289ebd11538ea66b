"""Finding files and reading / writing them without losing a byte (migrate_xla/sources/)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import make_repo, write
from migrate_xla.app.run import migrate_file, options_for
from migrate_xla.sources import writing
from migrate_xla.sources.discovery import Found, find_sources
from migrate_xla.sources.reading import read_source
from migrate_xla.sources.source import SourceError
from migrate_xla.sources.writing import write_back, write_copy


def found(root: Path, *paths: Path) -> list[str]:
    """The files find_sources yields for ``paths``, relative to ``root``, as posix strings."""
    return sorted(f.path.relative_to(root).as_posix() for f in find_sources(list(paths)))


# -- reading and writing back -----------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\r\ny = 2\r\n",  # CRLF
        b"x = 1\ry = 2\r",  # old Mac CR
        b"x = 1\r\ny = 2\nz = 3\r\n",  # mixed
        b"\xef\xbb\xbfx = '\xc3\xa9'\n",  # UTF-8 with BOM
        b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n",  # PEP 263 cookie
        b"if x:\n\ty = 1\n",  # tabs
        b"x = 1",  # no final newline
        b"",  # empty
    ],
    ids=["crlf", "cr", "mixed", "bom", "latin-1", "tabs", "no-eol", "empty"],
)
def test_unchanged_text_is_written_back_byte_for_byte(tmp_path, data):
    path = write(tmp_path / "m.py", data)
    source = read_source(path)
    write_back(source, source.text)
    assert path.read_bytes() == data


def test_bom_and_cookie_encodings_are_kept_for_new_text(tmp_path):
    bom = read_source(write(tmp_path / "bom.py", b"\xef\xbb\xbfx = 1\n"))
    latin = read_source(write(tmp_path / "lat.py", b"# coding: latin-1\nx = 'caf\xe9'\n"))
    assert bom.text == "x = 1\n"  # the BOM is not part of the text a rule sees
    write_back(bom, "y = 'é'\n")
    write_back(latin, latin.text + "y = 'né'\n")
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbfy = '\xc3\xa9'\n"
    assert (tmp_path / "lat.py").read_bytes() == b"# coding: latin-1\nx = 'caf\xe9'\ny = 'n\xe9'\n"


@pytest.mark.parametrize(
    "data, message",
    [
        (b"x = 'caf\xe9'\n", "cannot decode as utf-8"),
        (b"# -*- coding: klingon -*-\nx = 1\n", "coding"),
        (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", "coding"),  # a BOM and another cookie disagree
    ],
    ids=["latin-1-without-cookie", "unknown-cookie", "bom-and-cookie-disagree"],
)
def test_undecodable_files_are_refused_with_a_reason(tmp_path, data, message):
    with pytest.raises(SourceError, match=message):
        read_source(write(tmp_path / "bad.py", data))


def test_non_utf8_error_says_how_to_fix_it(tmp_path):
    with pytest.raises(SourceError, match="PEP 263 coding comment"):
        read_source(write(tmp_path / "bad.py", b"x = '\xff'\n"))


def test_notebooks_are_read_as_their_code_cells_not_passed_as_json(tmp_path):
    notebook = write(tmp_path / "nb.ipynb", '{"cells": [{"cell_type": "code", "source": ["x.cuda()"]}]}\n')
    source = read_source(notebook)
    assert source.text == "# <xla-migrate cell 1>\n\nx.cuda()\n"  # the program the engine migrates
    assert source.encode(source.text) == notebook.read_bytes()
    assert found(tmp_path, tmp_path) == ["nb.ipynb"]


def test_missing_file_and_directory_are_refused(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        read_source(tmp_path / "gone.py")
    (tmp_path / "pkg.py").mkdir()
    with pytest.raises(SourceError, match="directory"):
        read_source(tmp_path / "pkg.py")


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640])
def test_write_back_keeps_the_file_mode(tmp_path, mode):
    path = write(tmp_path / "m.py")
    path.chmod(mode)
    write_back(read_source(path), "x = 2\n")
    assert path.read_text() == "x = 2\n"
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_write_back_refuses_a_file_removed_during_the_run(tmp_path):
    path = write(tmp_path / "m.py")
    source = read_source(path)
    path.unlink()
    with pytest.raises(SourceError, match="removed"):
        write_back(source, "x = 2\n")
    assert list(tmp_path.iterdir()) == []  # not recreated, no temporary file left


def test_migrate_file_reports_a_vanished_file(tmp_path):
    result = migrate_file(Found(tmp_path / "gone.py", tmp_path), options_for())
    assert result.error is not None and "not found" in result.error
    assert not result.changed


def test_write_back_refuses_a_file_changed_during_the_run(tmp_path):
    path = write(tmp_path / "m.py")
    source = read_source(path)
    path.write_text("x = 'edited by a person meanwhile'\n")
    os.utime(path, ns=(source.mtime_ns + 10**9, source.mtime_ns + 10**9))
    with pytest.raises(SourceError, match="changed during the run"):
        write_back(source, "x = 2\n")
    assert path.read_text() == "x = 'edited by a person meanwhile'\n"


def test_write_back_refuses_a_read_only_file(tmp_path):
    path = write(tmp_path / "m.py")
    path.chmod(0o444)
    with pytest.raises(SourceError, match="read-only"):
        write_back(read_source(path), "x = 2\n")
    assert path.read_text() == "x = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_write_back_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = write(tmp_path / "real.py")
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    write_back(read_source(link), "x = 2\n")
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert target.read_text() == "x = 2\n"


def test_interrupted_write_leaves_the_file_whole_and_no_temporary_file(tmp_path, monkeypatch):
    path = write(tmp_path / "m.py")
    source = read_source(path)

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(writing.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_back(source, "x = 2\n")
    assert path.read_text() == "x = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_write_copy_creates_folders_and_keeps_the_mode(tmp_path):
    path = write(tmp_path / "src" / "m.py")
    path.chmod(0o755)
    target = tmp_path / "out" / "deep" / "m.py"
    write_copy(target, read_source(path), "x = 2\n")
    assert target.read_text() == "x = 2\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert path.read_text() == "x = 1\n"


# -- finding files ----------------------------------------------------------------------


def test_folders_are_walked_for_python_files_only(tmp_path):
    for name in ["a.py", "pkg/b.py", "pkg/sub/c.py", "notes.txt", "pkg/data.json", "script", "pkg/c.pyc"]:
        write(tmp_path / name)
    assert found(tmp_path, tmp_path) == ["a.py", "pkg/b.py", "pkg/sub/c.py"]


def test_default_excludes_are_not_walked(tmp_path):
    for folder in [".venv", "venv", "__pycache__", ".git", "node_modules", ".tox", "lib/site-packages"]:
        write(tmp_path / folder / "m.py")
    write(tmp_path / "keep.py")
    assert found(tmp_path, tmp_path) == ["keep.py"]


def test_an_excluded_folder_named_explicitly_is_walked(tmp_path):
    write(tmp_path / ".venv" / "m.py")
    assert found(tmp_path, tmp_path / ".venv") == [".venv/m.py"]


def test_gitignore_patterns(tmp_path):
    write(
        tmp_path / ".gitignore",
        "# generated code\n"
        "*_pb2.py\n"  # unanchored: any depth
        "/top.py\n"  # anchored: only at the root
        "build/\n"  # folders only
        "docs/*.py\n"  # anchored by its slash
        "**/gen/\n"
        "secret?.py\n"
        "!keep_pb2.py\n"  # re-included
        "\n",
    )
    for name in [
        "a_pb2.py",
        "pkg/b_pb2.py",
        "keep_pb2.py",
        "top.py",
        "pkg/top.py",
        "build/x.py",
        "pkg/build/y.py",
        "docs/conf.py",
        "docs/api/deep.py",
        "pkg/gen/z.py",
        "secret1.py",
        "secret12.py",
        "main.py",
    ]:
        write(tmp_path / name)
    write(tmp_path / "build.py")  # a file named like a dir-only pattern is kept
    assert found(tmp_path, tmp_path) == [
        "build.py",
        "docs/api/deep.py",
        "keep_pb2.py",
        "main.py",
        "pkg/top.py",
        "secret12.py",
    ]


def test_nested_gitignore_applies_below_its_folder_only(tmp_path):
    write(tmp_path / "pkg" / ".gitignore", "local.py\n/anchored.py\n")
    for name in [
        "local.py",
        "anchored.py",
        "pkg/local.py",
        "pkg/anchored.py",
        "pkg/sub/local.py",
        "pkg/sub/anchored.py",
    ]:
        write(tmp_path / name)
    assert found(tmp_path, tmp_path) == ["anchored.py", "local.py", "pkg/sub/anchored.py"]


def test_a_file_named_explicitly_is_processed_even_when_ignored(tmp_path):
    write(tmp_path / ".gitignore", "ignored.py\n.venv/\n")
    write(tmp_path / "ignored.py")
    write(tmp_path / ".venv" / "tool.py")
    assert found(tmp_path, tmp_path) == []
    assert found(tmp_path, tmp_path / "ignored.py", tmp_path / ".venv" / "tool.py") == [".venv/tool.py", "ignored.py"]


def test_ancestor_gitignore_counts_only_inside_a_git_repository(tmp_path):
    write(tmp_path / ".gitignore", "ignored.py\n")
    write(tmp_path / "src" / "ignored.py")
    write(tmp_path / "src" / "kept.py")
    assert found(tmp_path, tmp_path / "src") == ["src/ignored.py", "src/kept.py"]
    make_repo(tmp_path)
    assert found(tmp_path, tmp_path / "src") == ["src/kept.py"]


def test_gitignore_above_a_repository_top_is_not_used(tmp_path):
    # a dotfiles repository in the home folder ignoring everything must not hide a project
    write(tmp_path / ".gitignore", "*\n")
    make_repo(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    make_repo(project)
    write(project / "train.py")
    assert found(tmp_path, project) == ["project/train.py"]


def test_symlinks_met_while_walking_are_skipped(tmp_path):
    outside = write(tmp_path / "outside" / "o.py")
    tree = tmp_path / "tree"
    write(tree / "a.py")
    (tree / "link.py").symlink_to(outside)
    (tree / "linked_dir").symlink_to(outside.parent, target_is_directory=True)
    assert found(tmp_path, tree) == ["tree/a.py"]


def test_a_symlink_named_explicitly_is_followed(tmp_path):
    real = write(tmp_path / "real.py")
    (tmp_path / "link.py").symlink_to(real)
    assert found(tmp_path, tmp_path / "link.py") == ["link.py"]


def test_a_file_reached_twice_is_processed_once(tmp_path):
    write(tmp_path / "pkg" / "a.py")
    assert found(tmp_path, tmp_path, tmp_path / "pkg", tmp_path / "pkg" / "a.py") == ["pkg/a.py"]


def test_found_root_is_the_folder_argument(tmp_path):
    write(tmp_path / "src" / "pkg" / "a.py")
    (f,) = find_sources([tmp_path / "src"])
    assert f.root == tmp_path / "src"
    (g,) = find_sources([tmp_path / "src" / "pkg" / "a.py"])
    assert g.root == tmp_path / "src" / "pkg"


def test_a_folder_that_cannot_be_listed_is_handed_back_not_skipped(tmp_path, monkeypatch):
    from cli_helpers import make_unreadable

    write(tmp_path / "a.py")
    write(tmp_path / "locked" / "b.py")
    write(tmp_path / "pkg" / "c.py")
    make_unreadable(monkeypatch, tmp_path / "locked")
    unreadable = []
    files = [f.path.relative_to(tmp_path).as_posix() for f in find_sources([tmp_path], (), unreadable)]
    assert files == ["a.py", "pkg/c.py"]  # the walk went on
    assert unreadable == [(tmp_path / "locked", "cannot read folder: Permission denied; its files were not migrated")]


GPU_SCRIPT = "import torch\nx = torch.ones(2).cuda()\n"
MIGRATED_SCRIPT = "import torch\nimport torch_xla\nx = torch.ones(2).to(torch_xla.device())\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root may give a file away")
@pytest.mark.parametrize("through_link", [False, True], ids=["file", "symlink"])
def test_a_rewrite_keeps_the_files_owner_group_and_mode(tmp_path, cli, through_link):
    path = write(tmp_path / "train.py", GPU_SCRIPT)
    os.chown(path, 12345, 23456)  # another user's file, as in a shared checkout
    path.chmod(0o640)
    named = path
    if through_link:
        named = tmp_path / "link.py"
        named.symlink_to("train.py")
    assert cli(str(named)).exit_code == 1
    assert path.read_text() == MIGRATED_SCRIPT
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)
    assert named.is_symlink() == through_link  # a link stays a link, its target rewritten


def test_a_rewrite_that_may_not_give_the_file_away_still_writes_it(tmp_path, monkeypatch):
    path = write(tmp_path / "train.py", GPU_SCRIPT)

    def not_root(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(writing.os, "chown", not_root)
    write_back(read_source(path), MIGRATED_SCRIPT)
    assert path.read_text() == MIGRATED_SCRIPT
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temporary file left


def test_a_rewrite_leaves_other_hard_links_with_the_old_text(tmp_path, cli):
    path = write(tmp_path / "train.py", GPU_SCRIPT)
    os.link(path, tmp_path / "other.py")
    assert cli(str(path)).exit_code == 1
    assert path.read_text() == MIGRATED_SCRIPT
    assert (tmp_path / "other.py").read_text() == GPU_SCRIPT  # as docs/configuration.md says


@pytest.mark.parametrize("final", [True, False], ids=["final-newline", "no-final-newline"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_rewrite_keeps_the_newline_style_and_the_final_newline(tmp_path, cli, newline, final):
    def lines(*text: str) -> bytes:
        return (newline.join(text) + (newline if final else "")).encode()

    path = write(tmp_path / "train.py", lines("import torch", "x = torch.ones(2).cuda()", "y = 1"))
    assert cli(str(path)).exit_code == 1
    assert path.read_bytes() == lines(
        "import torch", "import torch_xla", "x = torch.ones(2).to(torch_xla.device())", "y = 1"
    )
