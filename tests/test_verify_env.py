"""verify where the user's code lives: their interpreter, their configuration, their CI and
test suite, and progress on a terminal.

The end-to-end runs use tests/scripts/tiny_mlp.py with 4 steps (the smallest that matches:
at 3, its warm-up compilations, 0, 1, 2, read as a graph growing every step). The tools
environment (xla-migrate installed with pip into a venv of its own, without torch, as
pipx or pre-commit would) needs PyPI: about 30 s, once for the module.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, copy_checkout, run_verify
from migrate_xla.verify import Settings, interpreter
from migrate_xla.verify.progress import Progress
from migrate_xla.verify.project_copy import migrate_project

TINY = ROOT / "tests" / "scripts" / "tiny_mlp.py"
DOCS = ROOT / "docs" / "verify.md"
STEPS = "4"


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without an active virtual environment or this test run's PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, **extra}


@pytest.fixture
def no_active_venv(monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


@pytest.fixture(scope="module")
def tools_venv(tmp_path_factory) -> Path:
    """A venv with this checkout installed by `pip install .` (its tracked and new files,
    copied: pip builds in the source folder): libcst and click, no torch."""
    source = copy_checkout(tmp_path_factory.mktemp("xla-migrate-source"))
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env())
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        check=True,
        env=clean_env(),
        timeout=600,
    )
    no_torch = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, env=clean_env()
    )
    assert no_torch.returncode != 0, "the tools environment must not have torch"
    return venv


def run_on_a_terminal(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``command`` with stderr on a pseudo-terminal; returns the process and what it drew there."""
    master, slave = os.openpty()
    drawn: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the terminal closed
                return
            if not data:
                return
            drawn.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=600)
    finally:
        os.close(slave)
    reader.join(10)
    os.close(master)
    return done, b"".join(drawn).decode(errors="replace")


# -- the user's interpreter ---------------------------------------------------------------


@pytest.mark.slow
def test_installed_without_torch_it_verifies_with_the_training_python_and_shows_progress(tools_venv, tmp_path):
    """The tool in a venv of its own (no torch) runs both children with --python's interpreter:
    on a terminal, a live line a run; the table and the JSON say which interpreter."""
    training_python = sys.executable  # this project's .venv python: torch and torch_xla
    done, terminal = run_on_a_terminal(
        [
            str(tools_venv / "bin" / "xla-migrate"),
            "verify",
            str(TINY),
            "--steps",
            STEPS,
            "--python",
            training_python,
            "--json",
            str(tmp_path / "r.json"),
        ],
        cwd=tmp_path,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stdout + terminal
    assert "verdict: match" in done.stdout
    assert f"python: {training_python} (--python): Python " in done.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["python"]["path"] == training_python and report["python"]["chosen_by"] == "--python"
    assert report["python"]["torch"].startswith("2.9.0") and report["python"]["torch_xla"].startswith("2.9.0")
    # the live lines, redrawn in place: every run, steps of --steps, elapsed time, compilations
    assert "\x1b[2F" in terminal, terminal
    assert re.search(rf"verify: reference +{STEPS}/{STEPS} steps +[\d.]+ s, done", terminal), terminal
    assert re.search(rf"verify: migrated +{STEPS}/{STEPS} steps +[\d.]+ s, XLA compilations: \d+, done", terminal), (
        terminal
    )
    assert re.search(rf"verify: migrated +[0-3]/{STEPS} steps", terminal), "no line before the run ended"


@pytest.mark.slow
def test_an_interpreter_without_torch_is_refused_before_any_run(tools_venv, tmp_path):
    xla_migrate = str(tools_venv / "bin" / "xla-migrate")
    own = subprocess.run(
        [xla_migrate, "verify", str(TINY)], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert own.returncode == 2, own.stderr
    assert f"{tools_venv / 'bin' / 'python'} (xla-migrate's own) runs your script" in own.stderr
    assert "no torch and no torch_xla" in own.stderr
    assert "pip install torch==2.9.0 torch_xla==2.9.0" in own.stderr and "--python" in own.stderr
    # the active virtual environment's python is the default when one is active
    active = subprocess.run(
        [xla_migrate, "verify", str(TINY), "--save-reference", str(tmp_path / "t.json")],
        cwd=tmp_path,
        env=clean_env(VIRTUAL_ENV=str(tools_venv)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert active.returncode == 2, active.stderr
    assert "(the active virtual environment ($VIRTUAL_ENV)) runs your script, but it has no torch:" in active.stderr
    assert "torch_xla" not in active.stderr  # a reference run needs torch only
    assert not (tmp_path / "t.json").exists()


def fake_distributions(folder: Path, **versions: str) -> Path:
    """Package metadata alone (``name-version.dist-info``), found first on PYTHONPATH."""
    for name, version in versions.items():
        info = folder / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder


def test_torch_and_torch_xla_of_other_releases_are_refused_with_the_pair_that_works(
    tmp_path, monkeypatch, no_active_venv
):
    monkeypatch.setenv("PYTHONPATH", str(fake_distributions(tmp_path / "site", torch="2.8.0")))
    result = run_verify(str(TINY), "--python", sys.executable)
    assert result.exit_code == 2
    assert (
        f"{sys.executable} (--python) runs your script, but its torch 2.8.0 and torch_xla 2.9.0 do not work "
        "together (torch_xla X.Y works only with torch X.Y): install the pair that works, torch 2.9.0 with "
        "torch_xla 2.9.0 (pip install torch==2.9.0 torch_xla==2.9.0)" in result.stderr
    )


@pytest.mark.parametrize(
    "torch, torch_xla, xla, expected",
    [
        (None, None, True, "has no torch and no torch_xla (the migrated run needs both): install the pair that works"),
        (
            "2.8.0+cu126",
            None,
            True,
            "has no torch_xla (the migrated run needs both), it has torch 2.8.0+cu126: "
            "install torch_xla 2.8, the release of its torch (pip install 'torch_xla==2.8.*')",
        ),
        (None, "2.9.0", True, "has no torch (the migrated run needs both), it has torch_xla 2.9.0: install the pair"),
        ("2.9.0", "2.8.0", True, "its torch 2.9.0 and torch_xla 2.8.0 do not work together"),
        (None, None, False, "has no torch: install torch there"),
    ],
    ids=["neither", "no-torch-xla", "no-torch", "other-releases", "reference-without-torch"],
)
def test_what_is_missing_is_named(torch, torch_xla, xla, expected):
    python = interpreter.Interpreter("/envs/train/bin/python", "--python", "3.11.7", torch, torch_xla)
    with pytest.raises(interpreter.InterpreterError) as error:
        interpreter.require(python, xla)
    assert expected in str(error.value)
    assert "or give --python the interpreter you train with" in str(error.value)


@pytest.mark.parametrize(
    "torch, torch_xla, xla",
    [("2.9.0+cu128", "2.9.0", True), ("2.9.1", "2.9.0", True), ("2.9.0", None, False), ("unknown", "2.9.0", True)],
)
def test_a_working_pair_passes(torch, torch_xla, xla):
    interpreter.require(interpreter.Interpreter("/p", "--python", "3.11", torch, torch_xla), xla)


def test_a_missing_interpreter_is_a_clear_error(tmp_path):
    result = run_verify(str(TINY), "--python", str(tmp_path / "nowhere" / "python"))
    assert result.exit_code == 2 and "--python" in result.stderr and "no such interpreter" in result.stderr


def test_the_working_pair_is_the_verify_extra():
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["verify"]
    assert f"torch=={interpreter.WORKING_PAIR[0]}" in extra and f"torch_xla=={interpreter.WORKING_PAIR[1]}" in extra


def test_the_instrumentation_imports_nothing_of_xla_migrate():
    """The child package runs alone in the user's interpreter (children._instrumentation copies it):
    its modules import one another (relatively), torch and the standard library only."""
    modules = sorted((ROOT / "migrate_xla" / "verify" / "child").glob("*.py"))
    assert len(modules) > 1
    for module in modules:
        assert not re.search(r"^\s*(from|import)\s+(migrate_xla|\.\.)", module.read_text(), re.M), module.name


@pytest.mark.slow
def test_a_script_importing_a_package_not_installed_is_the_environment_not_the_migration(tmp_path, no_active_venv):
    script = tmp_path / "train.py"
    script.write_text("import torch\nimport xla_migrate_absent_package\n")
    result = run_verify(str(script), "--steps", STEPS, "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 2, result.output
    message = json.loads((tmp_path / "r.json").read_text())["message"]
    assert message == (
        f"the reference run failed: ModuleNotFoundError: No module named 'xla_migrate_absent_package' in "
        f"{sys.executable} (xla-migrate's own): the original script fails the same way without xla-migrate, so it "
        "is the environment, not the migration: install it there, or give --python the interpreter you train with"
    )
    assert f"verdict: error: {message}" in result.stdout


# -- the configuration ------------------------------------------------------------------


@pytest.fixture
def configured(tmp_path) -> Path:
    """A project whose pyproject.toml migrates to SPMD without the sync rule."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy2(TINY, project / "train.py")
    (project / "pyproject.toml").write_text('[tool.xla-migrate]\ntarget = "spmd"\nignore = ["XLA201"]\n')
    return project


def test_verify_migrates_as_the_configuration_says_and_its_options_win(configured, tmp_path):
    script = configured / "train.py"
    text = migrate_project(script, configured, tmp_path / "a", Settings().migration()).script.read_text()
    assert "xr.use_spmd()" in text and "torch_xla.sync()" not in text
    given = Settings(target="single", ignore=("XLA202",)).migration()
    text = migrate_project(script, configured, tmp_path / "b", given).script.read_text()
    assert "xr.use_spmd()" not in text and "torch_xla.sync()" in text


def test_the_migrated_copy_finds_the_files_next_to_the_script(configured, tmp_path):
    """Hydra's config_path="conf", a data file beside a module: what the script reads relative
    to its own file is linked into the copy (a folder without a migrated file whole), hidden
    entries too (.git linked, never copied)."""
    (configured / "conf").mkdir()
    (configured / "conf" / "config.yaml").write_text("device: cuda\n")
    (configured / "pkg").mkdir()
    (configured / "pkg" / "__init__.py").write_text("")
    (configured / "pkg" / "vocab.txt").write_text("a b c\n")
    (configured / ".git").mkdir()
    copy = migrate_project(configured / "train.py", configured, tmp_path / "out", Settings().migration())
    migrated, root = copy.script, copy.root
    assert (root / "conf" / "config.yaml").read_text() == "device: cuda\n"
    assert (root / "pkg" / "vocab.txt").read_text() == "a b c\n"
    assert not (root / "pkg").is_symlink() and (root / "pkg" / "__init__.py").is_file()
    assert (root / ".git").is_symlink() and (root / "conf").is_symlink()
    assert (configured / "train.py").read_text() != migrated.read_text()  # the script itself is migrated


def test_a_bad_configuration_stops_verify(configured):
    (configured / "pyproject.toml").write_text('[tool.xla-migrate]\ntarget = "tpu"\n')
    result = run_verify(str(configured / "train.py"))
    assert result.exit_code == 2
    assert f"{configured / 'pyproject.toml'}: [tool.xla-migrate] target: expected one of" in result.stderr


@pytest.mark.slow
def test_verify_checks_the_migration_the_configuration_makes(configured, monkeypatch, no_active_venv):
    """ignore = ["XLA201"]: the migration has no torch_xla.sync(), and verify says so."""
    (configured / "pyproject.toml").write_text('[tool.xla-migrate]\nignore = ["XLA201"]\n')
    monkeypatch.chdir(configured)
    result = run_verify("train.py", "--steps", STEPS)
    assert result.exit_code == 1, result.output
    assert "steps-not-cut" in result.stdout and "[XLA201]" in result.stdout
    assert result.stderr == ""  # no progress lines: stderr is not a terminal


# -- the recipes of docs/verify.md ----------------------------------------------------------


@pytest.mark.slow
def test_the_ci_recipe_saves_a_reference_and_verifies_against_it(tmp_path, no_active_venv):
    text = DOCS.read_text()
    shell = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    commands = [line for line in shell.splitlines() if line.startswith("xla-migrate verify")]
    assert [c for c in commands if "--save-reference" in c] and [c for c in commands if "--reference " in c]
    # the workflow runs the same commands
    assert sorted(re.findall(r"run: (xla-migrate verify .*)", text)) == sorted(commands)
    shutil.copy2(TINY, tmp_path / "train.py")
    for command in commands:
        args = shlex.split(command.replace("--steps 10", f"--steps {STEPS}"))[1:]
        done = subprocess.run(
            [sys.executable, "-m", "migrate_xla", *args],
            cwd=tmp_path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    report = json.loads((tmp_path / "verify.json").read_text())
    assert report["verdict"] == "match" and report["steps_compared"] == int(STEPS)
    assert report["reference"]["device"] == "cpu (cuda emulated) (saved trace)"


@pytest.mark.slow
def test_the_test_suite_recipe_passes_in_a_project_of_its_own(tmp_path):
    code = re.search(r"```python\n(# tests/test_xla_migration.py\n.*?)```", DOCS.read_text(), re.S).group(1)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_xla_migration.py").write_text(code.replace("steps=10", f"steps={STEPS}"))
    shutil.copy2(TINY, tmp_path / "train.py")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


# -- progress ------------------------------------------------------------------------------


def test_progress_lines_are_redrawn_in_place(tmp_path):
    folders = {"reference": tmp_path / "records-reference", "migrated": tmp_path / "records-migrated"}
    folders["migrated"].mkdir()
    (folders["migrated"] / "progress-11.json").write_text(json.dumps({"steps": 2, "compilations": 3}))
    (folders["migrated"] / "progress-12.json").write_text(json.dumps({"steps": 1, "compilations": 1}))
    stream = io.StringIO()
    progress = Progress(stream, 10, folders)
    progress.show({})
    first = stream.getvalue()
    assert re.fullmatch(
        r"\x1b\[Kverify: reference +0/10 steps +[\d.]+ s\n"
        r"\x1b\[Kverify: migrated +2/10 steps +[\d.]+ s, XLA compilations: 3\n",
        first,
    ), first
    progress.show({})
    assert stream.getvalue()[len(first) :].startswith("\x1b[2F\x1b[K")  # back up two lines, redrawn
