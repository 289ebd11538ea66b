"""[tool.xla-migrate] in pyproject.toml: every key, where it is found, what the command line overrides, bad tables."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import FINDING, FIXABLE
from conftest import ROOT, make_repo, write
from migrate_xla.app import config
from migrate_xla.app.cli import migrate
from migrate_xla.app.project import MIGRATION_FIELDS, configure
from migrate_xla.rule import settings as run_settings
from migrate_xla.rule.findings import RUNTIMES, TARGETS
from migrate_xla.rule.settings import Settings
from migrate_xla.sources.discovery import Found

# XLA405: an unsafe fix, a hint when held back (a held-back .half() is marked in the code)
HALF = "import torch\nx = torch.ones(2, dtype=torch.float16)\n"
MIGRATED_HALF = "import torch\nx = torch.ones(2, dtype=torch.bfloat16)\n"


def pyproject(folder: Path, table: str) -> Path:
    return write(folder / "pyproject.toml", f"[project]\nname = 'x'\n\n[tool.xla-migrate]\n{table}\n")


def codes(output: str) -> list[str]:
    return sorted(m["code"] for m in map(FINDING.match, output.splitlines()) if m)


# -- each key --------------------------------------------------------------------------


def test_select_and_ignore(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    pyproject(tmp_path, 'select = ["XLA1"]\nignore = ["XLA103"]')
    assert codes(cli("--check", str(path)).stdout) == ["XLA101"]


def test_unsafe_fixes(tmp_path, cli):
    path = write(tmp_path / "train.py", HALF)
    pyproject(tmp_path, "unsafe-fixes = true")
    assert cli(str(path)).exit_code == 1
    assert path.read_text() == MIGRATED_HALF


def test_target_reaches_the_engine(tmp_path):
    pyproject(tmp_path, 'target = "spmd"')
    assert config.discover([tmp_path]).target == "spmd"


def test_runtime_is_read_and_checked(tmp_path):
    toml = pyproject(tmp_path, 'runtime = "torch-tpu"')
    assert config.discover([tmp_path]) == Settings(runtime="torch-tpu", config=str(toml))
    pyproject(tmp_path, 'runtime = "jax"')
    with pytest.raises(config.ConfigError, match='runtime: expected one of torch-xla, torch-tpu, got "jax"'):
        config.discover([tmp_path])


def test_exclude_applies_while_walking_not_to_files_named_explicitly(tmp_path, cli):
    pyproject(tmp_path, 'exclude = ["legacy/", "*_gen.py", "/src/vendored"]')
    for name in ["src/train.py", "src/legacy/old.py", "src/model_gen.py", "src/vendored/lib.py", "vendored/top.py"]:
        write(tmp_path / name, FIXABLE)
    result = cli("--check", str(tmp_path))
    found = sorted(
        {Path(m["path"]).relative_to(tmp_path).as_posix() for m in map(FINDING.match, result.stdout.splitlines())}
    )
    # "/src/vendored" is anchored at the pyproject's folder: a top-level vendored/ is still walked
    assert found == ["src/train.py", "vendored/top.py"]
    assert cli("--check", str(tmp_path / "src/legacy/old.py")).exit_code == 1  # named: processed


def test_exclude_on_the_command_line_extends_the_configured_one(tmp_path, cli, monkeypatch):
    pyproject(tmp_path, 'exclude = ["legacy/"]')
    names = ["train.py", "legacy/old.py", "gen/g.py", "model_pb2.py", "third_party/lib.py", "src/third_party/keep.py"]
    for name in names:
        write(tmp_path / name, FIXABLE)
    monkeypatch.chdir(tmp_path)  # anchored patterns given on the command line start at the working directory

    def walked(*options: str) -> list[str]:
        result = cli("--check", *options, ".")
        return sorted({Path(m["path"]).as_posix() for m in map(FINDING.match, result.stdout.splitlines()) if m})

    assert walked("--exclude", "gen/,*_pb2.py", "--extend-exclude", "/third_party") == [
        "src/third_party/keep.py",
        "train.py",
    ]
    assert "legacy/old.py" not in walked() and "gen/g.py" in walked()
    assert walked("--exclude", "*.py") == []
    result = cli("--check", "--exclude", "*.py", "gen/g.py")
    assert codes(result.stdout) == ["XLA101", "XLA103"]  # a file named explicitly is still processed


def test_per_file_ignores_apply_to_the_files_they_match(tmp_path, cli):
    pyproject(
        tmp_path,
        'select = ["XLA1"]\n[tool.xla-migrate.per-file-ignores]\n"tests/" = ["XLA1"]\n"conftest.py" = ["XLA101"]\n"scripts/*.py" = ["XLA103"]',
    )
    for name in ["src/train.py", "tests/unit/test_a.py", "src/conftest.py", "scripts/run.py", "scripts/deep/run.py"]:
        write(tmp_path / name, FIXABLE)
    result = cli("--check", str(tmp_path))
    by_file: dict[str, list[str]] = {}
    for m in map(FINDING.match, result.stdout.splitlines()):
        by_file.setdefault(Path(m["path"]).relative_to(tmp_path).as_posix(), []).append(m["code"])
    assert by_file == {
        "src/train.py": ["XLA101", "XLA103"],
        "src/conftest.py": ["XLA103"],  # a name without a slash matches at any depth
        "scripts/run.py": ["XLA101"],
        "scripts/deep/run.py": ["XLA101", "XLA103"],  # * does not cross a slash
    }  # tests/unit/test_a.py: every XLA1 rule off, nothing left


def test_per_file_ignores_work_in_the_process_pool(tmp_path):
    pyproject(tmp_path, 'select = ["XLA1"]\n[tool.xla-migrate.per-file-ignores]\n"b*.py" = ["XLA1"]')
    for name in ["a.py", "b.py", "c.py", "b2.py"]:
        write(tmp_path / name, FIXABLE)
    result = subprocess.run(
        [sys.executable, "-m", "migrate_xla", "--check", "-j", "2", "."], cwd=tmp_path, capture_output=True, text=True
    )
    assert sorted({FINDING.match(line)["path"] for line in result.stdout.splitlines()}) == ["a.py", "c.py"]


# -- the command line wins ---------------------------------------------------------------


def test_command_line_select_and_ignore_replace_the_files(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    pyproject(tmp_path, 'select = ["XLA103"]\nignore = ["XLA101"]')
    assert codes(cli("--check", str(path)).stdout) == ["XLA103"]
    assert codes(cli("--check", "--select", "XLA101", str(path)).stdout) == []  # the file's ignore still holds
    assert codes(cli("--check", "--select", "XLA101", "--ignore", "XLA7", str(path)).stdout) == ["XLA101"]


def test_no_unsafe_fixes_on_the_command_line_wins(tmp_path, cli):
    path = write(tmp_path / "train.py", HALF)
    pyproject(tmp_path, "unsafe-fixes = true")
    assert cli("--no-unsafe-fixes", str(path)).exit_code == 0  # the unsafe fix is only offered
    assert path.read_text() == HALF


def test_override_keeps_what_the_command_line_did_not_give():
    loaded = Settings(select=("XLA1",), ignore=("XLA103",), unsafe_fixes=True, exclude=("build/",))
    merged = loaded.override(select=("XLA2",), ignore=None, target=None, unsafe_fixes=False)
    assert merged == Settings(select=("XLA2",), ignore=("XLA103",), unsafe_fixes=False, exclude=("build/",))


def test_one_settings_object_from_the_command_line_to_the_rule(tmp_path, monkeypatch):
    """The settings configure() builds (file, then command line) are the ones each rule reads
    as ctx.settings, less a file's per-file-ignores; ctx.unsafe_fixes and ctx.target read them."""
    from migrate_xla.app import run
    from migrate_xla.engine import pipeline

    toml = pyproject(tmp_path, 'target = "spmd"\n[tool.xla-migrate.per-file-ignores]\n"train.py" = ["XLA103"]')
    path = write(tmp_path / "train.py", FIXABLE)
    settings = configure([path], unsafe_fixes=True, select=("XLA1",))
    assert settings == Settings(
        select=("XLA1",),
        unsafe_fixes=True,
        target="spmd",
        per_file_ignores=(("train.py", ("XLA103",)),),
        config=str(toml),
    )
    seen = []
    real = pipeline.FileContext

    def spy(settings, **fields):
        ctx = real(settings, **fields)
        seen.append(ctx)
        return ctx

    monkeypatch.setattr(pipeline, "FileContext", spy)
    (result,) = run.migrate_files([Found(path, tmp_path)], settings, jobs=1)
    assert seen and all(ctx.settings == settings.for_file(path) for ctx in seen)
    ctx = seen[0]
    assert (ctx.unsafe_fixes, ctx.target, ctx.runtime) == (True, "spmd", RUNTIMES[0])
    assert "XLA103" not in ctx.settings.codes and "XLA101" in ctx.settings.codes
    assert [d.code for d in result.diagnostics] == ["XLA101"]
    assert run_settings.select(["XLA1"], ["XLA103"]) == ctx.settings.codes


def test_settings_travel_to_the_workers():
    import pickle

    settings = Settings.of(select=["XLA1"], per_file_ignores=[("tests/", ["XLA101"])], unsafe_fixes=True)
    assert pickle.loads(pickle.dumps(settings)) == settings
    assert settings.per_file_ignores == (("tests/", ("XLA101",)),)


def test_verify_takes_every_migration_option():
    """verify's own Settings carries each Settings field the shared migration options give."""
    import dataclasses

    from migrate_xla.verify import Settings as VerifySettings

    assert set(MIGRATION_FIELDS) <= {field.name for field in dataclasses.fields(VerifySettings)}
    assert set(MIGRATION_FIELDS) <= set(Settings._fields)
    given = dict(zip(MIGRATION_FIELDS, ("single", "torch-tpu", ("XLA1",), ("XLA103",), True), strict=True))
    assert VerifySettings(**given).migration() == given
    assert VerifySettings().migration() == {}
    assert Settings().override(**given).checked().runtime == "torch-tpu"


def test_pytorch_xla_targets_need_the_pytorch_xla_runtime(tmp_path, cli):
    """--target multiprocess and spmd write torch_xla.launch and SPMD: not forms of TorchTPU."""
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli("--check", "--runtime", "torch-tpu", "--target", "spmd", str(path))
    assert result.exit_code == 2
    assert "--target spmd is a PyTorch/XLA form" in result.stderr


# -- finding the file --------------------------------------------------------------------


def test_nearest_pyproject_with_the_table_wins(tmp_path, cli):
    pyproject(tmp_path, 'select = ["XLA103"]')
    write(tmp_path / "pkg/pyproject.toml", "[project]\nname = 'pkg'\n")  # no table: the search goes on up
    path = write(tmp_path / "pkg/src/train.py", FIXABLE)
    assert codes(cli("--check", str(path)).stdout) == ["XLA103"]
    pyproject(tmp_path / "pkg", 'select = ["XLA101"]')
    assert codes(cli("--check", str(path)).stdout) == ["XLA101"]


def test_search_stops_at_the_top_of_a_git_repository(tmp_path, cli):
    pyproject(tmp_path, 'select = ["XLA103"]')
    make_repo(tmp_path / "repo")
    path = write(tmp_path / "repo/train.py", FIXABLE)
    assert codes(cli("--check", str(path)).stdout) == ["XLA101", "XLA103"]


def test_search_starts_at_the_common_folder_of_the_paths(tmp_path, cli):
    pyproject(tmp_path, 'select = ["XLA103"]')
    pyproject(tmp_path / "a", 'select = ["XLA101"]')
    a, b = write(tmp_path / "a/x.py", FIXABLE), write(tmp_path / "b/y.py", FIXABLE)
    assert codes(cli("--check", str(a)).stdout) == ["XLA101"]
    assert codes(cli("--check", str(a), str(b)).stdout) == ["XLA103", "XLA103"]


def test_stdin_uses_the_working_directorys_pyproject(tmp_path):
    pyproject(tmp_path, "unsafe-fixes = true")
    result = subprocess.run(
        [sys.executable, "-m", "migrate_xla", "-"], cwd=tmp_path, input=HALF, capture_output=True, text=True
    )
    assert result.stdout == MIGRATED_HALF


# -- bad tables: exit 2, the file and the key named, nothing written ----------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "selct = []",
            r"selct: unknown key \(known: select, ignore, target, runtime, unsafe-fixes, exclude, per-file-ignores\)",
        ),
        ('select = "XLA1"', r'select: expected a list of rule codes or prefixes, got "XLA1"'),
        ('ignore = ["XLA99"]', r"ignore: unknown rule code or prefix: XLA99"),
        ('target = "tpu"', r'target: expected one of .*single.*, got "tpu"'),
        ('unsafe-fixes = "yes"', r'unsafe-fixes: expected true or false, got "yes"'),
        ("exclude = [1]", r"exclude: expected a list of path patterns, got \[1\]"),
        (
            'per-file-ignores = ["tests/"]',
            r'per-file-ignores: expected a table of pattern = \["CODE", ...\], got \["tests/"\]',
        ),
        (
            'per-file-ignores = { "tests/" = ["XLA1", "NOPE"] }',
            r'per-file-ignores "tests/": unknown rule code or prefix: NOPE',
        ),
        ('per-file-ignores = { "tests/" = "XLA1" }', r'per-file-ignores "tests/": expected a list'),
    ],
)
def test_bad_table_is_a_usage_error_naming_file_and_key(tmp_path, cli, table, message):
    path = write(tmp_path / "train.py", FIXABLE)
    toml = pyproject(tmp_path, table)
    result = cli(str(path))
    assert result.exit_code == 2
    assert re.search(re.escape(f"{toml}: [tool.xla-migrate] ") + message, result.stderr), result.stderr
    assert path.read_text() == FIXABLE


def test_invalid_toml_is_a_usage_error(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    toml = write(tmp_path / "pyproject.toml", "[tool.xla-migrate\nselect = 1\n")
    result = cli(str(path))
    assert result.exit_code == 2
    assert f"{toml}: not valid TOML" in result.stderr
    assert path.read_text() == FIXABLE


def test_target_choices_are_the_command_lines():
    (option,) = [p for p in migrate.params if p.name == "target"]
    assert tuple(option.type.choices) == TARGETS


def test_the_documented_example_loads(tmp_path):
    documented = (ROOT / "docs" / "configuration.md").read_text()
    example = re.search(r"```toml\n(\[tool\.xla-migrate\]\n.*?)```", documented, re.S)[1]
    loaded = config.load(write(tmp_path / "pyproject.toml", example))
    assert loaded.select and loaded.exclude and loaded.per_file_ignores
    loaded.checked()
