"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit in a throw-away repo.

pre-commit installs this checkout into a virtual environment of its own (``pip install .``,
from PyPI: it needs the network), as it does for a user. ``pre-commit try-repo`` builds
that environment afresh on every call (its store is a temporary folder, whatever
PRE_COMMIT_HOME says), about 45 s here; so one test runs ``try-repo`` itself, and the
others run ``pre-commit run`` with the configuration try-repo would write and one store
for the module, so the environment is built once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_checkout

# every test has pre-commit install the hooks with pip (make test-fast leaves them out)
pytestmark = pytest.mark.slow

pytest.importorskip("pre_commit", reason="pre-commit comes with the dev extra")

GPU_SCRIPT = 'import torch\ndevice = torch.device("cuda")\nx = torch.ones(2).to(device)\n'
CLEAN_SCRIPT = "import torch\nx = torch.ones(2)\n"
NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": [], "source": ["x = 1\n"]}
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}
HOOKS = ("xla-migrate", "xla-migrate-check")


def git(*args: str, cwd: Path) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True, env=_env()
    ).stdout


def _env(**extra: str) -> dict[str, str]:
    """The environment without this test run's PYTHONPATH (the hook must use what pip installed)
    and without git variables of an enclosing hook."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("GIT_")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """This checkout as it is now (tracked and new files, not ignored ones), committed in a
    repository of its own: what pre-commit clones and installs. Returns (path, commit)."""
    repo = copy_checkout(tmp_path_factory.mktemp("hook-repo"))
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "snapshot", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path) -> Path:
    """A user's repository, empty."""
    path = tmp_path / "project"
    path.mkdir()
    git("init", "-q", cwd=path)
    return path


def stage(project: Path, name: str, text: str) -> Path:
    path = project / name
    path.write_text(text)
    git("add", name, cwd=project)
    return path


def pre_commit(*args: str, cwd: Path, home: Path | None = None) -> subprocess.CompletedProcess:
    env = _env(PRE_COMMIT_HOME=str(home)) if home else _env()
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args, "--color", "never"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def run_hook(hook: str, project: Path, hook_repo: tuple[Path, str], home: Path, always_run: bool = False):
    """``pre-commit run HOOK`` on the staged files, with the configuration try-repo writes."""
    repo, rev = hook_repo
    extra = ", always_run: true" if always_run else ""
    config = project.parent / "pre-commit-config.yaml"
    config.write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n" + "".join(f"  - {{id: {h}{extra}}}\n" for h in HOOKS)
    )
    return pre_commit("run", hook, "--config", str(config), cwd=project, home=home)


def test_try_repo_fix_hook_fails_on_a_staged_gpu_script_and_fixes_it(project, hook_repo):
    script = stage(project, "train.py", GPU_SCRIPT)
    result = pre_commit("try-repo", str(hook_repo[0]), "xla-migrate", "--ref", hook_repo[1], cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    migrated = script.read_text()
    assert "torch_xla.device()" in migrated and "cuda" not in migrated


def test_fix_hook_fails_on_a_staged_gpu_script_and_fixes_it(project, hook_repo, pre_commit_home):
    script = stage(project, "train.py", GPU_SCRIPT)
    result = run_hook("xla-migrate", project, hook_repo, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    assert "torch_xla.device()" in script.read_text()
    # the user stages the fix: now the hook passes
    git("add", "train.py", cwd=project)
    result = run_hook("xla-migrate", project, hook_repo, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_hook_fails_and_leaves_the_file_alone(project, hook_repo, pre_commit_home):
    script = stage(project, "train.py", GPU_SCRIPT)
    result = run_hook("xla-migrate-check", project, hook_repo, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:2:10: XLA101" in result.stdout
    assert script.read_text() == GPU_SCRIPT


@pytest.mark.parametrize("hook", HOOKS)
def test_clean_repo_passes(project, hook_repo, pre_commit_home, hook):
    script = stage(project, "model.py", CLEAN_SCRIPT)
    stage(project, "analysis.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")  # a jupyter file reaches the hook too
    result = run_hook(hook, project, hook_repo, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
    assert script.read_text() == CLEAN_SCRIPT


@pytest.mark.parametrize("hook", HOOKS)
def test_no_files_passed_is_not_an_error(project, hook_repo, pre_commit_home, hook):
    stage(project, "README.md", "# not python\n")
    # always_run: pre-commit calls the hook even though no staged file matches, with no file names
    result = run_hook(hook, project, hook_repo, pre_commit_home, always_run=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
