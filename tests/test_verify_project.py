"""verify's migrated copy of the script's project (migrate_xla/verify/project_copy.py): rooted
where its user would say (the repository's root, a root marker), with what the script imports
migrated and everything else the original reaches by a relative path linked at the same place,
the run starting in the copy's folder of the caller's working directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_verify
from migrate_xla.verify import Settings
from migrate_xla.verify.project_copy import ROOT_MARKERS, migrate_project, project_root, working_directory

# src/train.py of a Lightning + Hydra template, as far as finding its root goes: rootutils
# walks up from the file for .project-root, puts the root on sys.path and reads configs/ there
FIND_ROOT = """
import sys
from pathlib import Path


def find_root(indicator=".project-root"):
    for folder in Path(__file__).resolve().parents:
        if (folder / indicator).exists():
            return folder
    raise FileNotFoundError("Project root directory not found.")


ROOT = find_root()
sys.path.insert(0, str(ROOT))
CONFIG = dict(line.split(": ") for line in (ROOT / "configs" / "train.yaml").read_text().splitlines())
"""


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def hydra_template(root: Path) -> Path:
    """A Lightning + Hydra template's layout: the root marked (pyproject.toml, .project-root,
    .git, .venv), configs/, data/ and logs/ beside src/, whose train.py finds the root by the marker."""
    write(root / "pyproject.toml", '[project]\nname = "template"\n')
    write(root / ".project-root")
    write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(root / ".venv" / "pyvenv.cfg", "home = /usr/bin\n")
    write(root / ".venv" / "lib" / "site.py")
    write(root / "configs" / "train.yaml", "lr: 0.05\nsteps: 30\n")
    write(root / "data" / "MNIST" / "raw" / "train.bin", "bytes\n")
    write(root / "logs" / "train" / "runs" / "old.log", "an earlier run\n")
    write(root / "src" / "__init__.py")
    write(root / "src" / "models" / "__init__.py")
    write(
        root / "src" / "models" / "mlp.py",
        "import torch\n\n\ndef make_model():\n    return torch.nn.Linear(8, 1).cuda()\n",
    )
    write(root / "src" / "__pycache__" / "train.cpython-311.pyc", "the user's bytecode\n")
    return write(
        root / "src" / "train.py",
        FIND_ROOT + "from src.models import mlp\n\nprint('root', ROOT)\nprint('lr', CONFIG['lr'])\n",
    )


def library_example(root: Path) -> Path:
    """A graph-learning library's example: examples/gcn.py imports the library from the
    checkout and reads its data from ../data relative to its own file."""
    write(root / "setup.py", "from setuptools import setup\nsetup()\n")
    write(root / ".git" / "HEAD", "ref: refs/heads/master\n")
    write(root / "data" / "x.pt", "the dataset\n")
    write(root / "graphlib" / "__init__.py")
    write(root / "graphlib" / "layers.py", "from .utils import scatter\n\n\ndef gcn(x):\n    return x.cuda()\n")
    write(root / "graphlib" / "utils.py", "def scatter(x):\n    return x\n")
    write(root / "graphlib" / "unused.py", "import torch\nDEVICE = torch.device('cuda')\n")
    return write(
        root / "examples" / "gcn.py",
        """\
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from graphlib.layers import gcn

        path = Path(__file__).resolve().parent / "../data/x.pt"
        print("data", path.read_text().strip())
        """,
    )


def migrated(script: Path, out: Path, cwd: Path, project: Path | None = None):
    return migrate_project(script, project, out, Settings().migration(), cwd=cwd)


def run_copy(copy) -> str:
    """The migrated script (torch-free where these tests run it) run as verify runs it."""
    result = subprocess.run(
        [sys.executable, str(copy.script)], cwd=copy.cwd, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# -- the project's root ---------------------------------------------------------------------


@pytest.mark.parametrize("marker", ROOT_MARKERS)
def test_the_root_is_the_nearest_folder_up_holding_a_marker(tmp_path, marker):
    script = write(tmp_path / "repo" / "src" / "deep" / "train.py")
    (tmp_path / "repo" / marker).mkdir() if marker == ".git" else write(tmp_path / "repo" / marker)
    assert project_root(script) == (tmp_path / "repo").resolve()
    write(tmp_path / "repo" / "src" / "pyproject.toml")  # a nearer one wins
    assert project_root(script) == (tmp_path / "repo" / "src").resolve()


def test_a_git_file_marks_a_root_too_and_without_a_marker_it_is_the_scripts_folder(tmp_path):
    if any(os.path.lexists(folder / marker) for folder in tmp_path.parents for marker in ROOT_MARKERS):
        pytest.skip("a folder above the temporary folder is marked")
    script = write(tmp_path / "worktree" / "examples" / "train.py")
    assert project_root(script) == script.parent.resolve()
    write(tmp_path / "worktree" / ".git", "gitdir: /elsewhere/.git/worktrees/worktree\n")  # a worktree's, a submodule's
    assert project_root(script) == (tmp_path / "worktree").resolve()


# -- the copy -------------------------------------------------------------------------------


def test_the_hydra_templates_copy_finds_its_root_by_the_marker_and_its_configs(tmp_path):
    root = tmp_path / "template"
    script = hydra_template(root)
    copy = migrated(script, tmp_path / "out", cwd=root)
    assert copy.root == tmp_path / "out" and copy.script == copy.root / "src" / "train.py"
    assert run_copy(copy).splitlines() == [f"root {copy.root.resolve()}", "lr 0.05"]
    # what the script imports is migrated; the rest is linked, hidden entries too
    assert "torch_xla" in (copy.root / "src" / "models" / "mlp.py").read_text()
    for written in ("src", "src/models", "src/train.py", "src/models/mlp.py", "src/__init__.py"):
        assert not (copy.root / written).is_symlink(), written
    for linked in (".project-root", "pyproject.toml", "configs", "data", "logs", ".git", ".venv"):
        assert (copy.root / linked).is_symlink(), linked
        assert (copy.root / linked).resolve() == (root / linked).resolve()
    assert not (copy.root / "src" / "__pycache__").exists()  # the migrated bytecode is the copy's own
    assert copy.originals == {
        copy.root / path: (root / path).resolve()
        for path in ("src/__init__.py", "src/train.py", "src/models/__init__.py", "src/models/mlp.py")
    }


def test_the_library_examples_copy_reads_the_data_beside_its_folder_and_migrates_what_it_imports(tmp_path):
    root = tmp_path / "graphlib-repo"
    script = library_example(root)
    copy = migrated(script, tmp_path / "out", cwd=root / "examples")
    assert run_copy(copy).splitlines() == ["data the dataset"]
    layers = copy.root / "graphlib" / "layers.py"
    assert not layers.is_symlink() and "torch_xla" in layers.read_text()  # imported from outside examples/
    assert not (copy.root / "graphlib" / "utils.py").is_symlink()  # imported by layers.py, relatively
    assert (copy.root / "graphlib" / "unused.py").is_symlink()  # imported by nothing: as it is
    assert (copy.root / "data").is_symlink() and (copy.root / ".git").is_symlink()
    assert (copy.root / "setup.py").is_symlink()


def test_project_names_the_root_and_everything_of_it_is_migrated(tmp_path):
    root = tmp_path / "graphlib-repo"
    script = library_example(root)
    copy = migrated(script, tmp_path / "out", cwd=tmp_path, project=root / "graphlib" / "..")
    assert copy.root == tmp_path / "out"
    assert "torch_xla" in (copy.root / "graphlib" / "unused.py").read_text()  # the folder given is all migrated
    assert (copy.root / "data").is_symlink()


def test_an_excluded_module_the_script_imports_runs_as_it_is(tmp_path):
    root = tmp_path / "graphlib-repo"
    script = library_example(root)
    write(root / "pyproject.toml", '[tool.xla-migrate]\nexclude = ["graphlib/layers.py"]\n')
    copy = migrated(script, tmp_path / "out", cwd=root)
    layers = copy.root / "graphlib" / "layers.py"
    assert not layers.is_symlink() and layers.read_text() == (root / "graphlib" / "layers.py").read_text()


def test_a_script_outside_the_project_named_is_refused(tmp_path):
    from migrate_xla.verify.project_copy import CopyError

    script = write(tmp_path / "elsewhere" / "train.py")
    with pytest.raises(CopyError, match="is not inside the project folder"):
        migrated(script, tmp_path / "out", cwd=tmp_path, project=tmp_path / "project")


# -- where the migrated run starts ----------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "start"),
    [
        (".", "."),  # from the root: the copy's root
        ("src", "src"),  # from the script's folder
        ("configs", "configs"),  # from a folder with nothing migrated: made, its entries linked
        ("data/MNIST", "data/MNIST"),
    ],
)
def test_the_migrated_run_starts_in_the_copys_folder_of_the_working_directory(tmp_path, cwd, start):
    root = tmp_path / "template"
    script = hydra_template(root)
    copy = migrated(script, tmp_path / "out", cwd=root / cwd)
    assert copy.cwd == copy.root / start
    assert copy.cwd.is_dir() and not copy.cwd.is_symlink()  # a run there sees the copy above it, not the user's tree
    assert working_directory(copy.script) == str(copy.cwd)
    if start == "configs":
        assert (copy.cwd / "train.yaml").is_symlink()
    assert (copy.root / ".git").is_symlink() and (copy.root / "data" / "MNIST" / "raw").is_symlink() == (
        start == "data/MNIST"
    )


def test_writes_through_a_link_land_in_the_users_tree_and_new_folders_stay_in_the_copy(tmp_path):
    """What the original writes into an existing folder (a checkpoint into logs/), the migrated
    run writes there too, through the link: written through, as the copy always did; a folder
    it creates (Hydra's outputs/ at the root) is the copy's own."""
    root = tmp_path / "template"
    script = hydra_template(root)
    write(script, FIND_ROOT + "(ROOT / 'logs' / 'ckpt.txt').write_text('step 1')\n(ROOT / 'outputs').mkdir()\n")
    copy = migrated(script, tmp_path / "out", cwd=root)
    run_copy(copy)
    assert (root / "logs" / "ckpt.txt").read_text() == "step 1"
    assert (copy.root / "outputs").is_dir() and not (root / "outputs").exists()


def test_a_working_directory_outside_the_project_stays_the_callers(tmp_path):
    script = hydra_template(tmp_path / "template")
    (tmp_path / "elsewhere").mkdir()
    copy = migrated(script, tmp_path / "out", cwd=tmp_path / "elsewhere")
    assert copy.cwd == (tmp_path / "elsewhere").resolve()
    assert working_directory(tmp_path / "not-a-copy.py") == os.getcwd()


def test_a_large_tree_costs_its_few_folders_not_a_walk(tmp_path):
    """A checkout's subtrees that hold nothing migrated are one link each, whatever they hold."""
    root = tmp_path / "big"
    script = hydra_template(root)
    for package in range(20):
        for module in range(20):
            write(root / "vendor" / f"p{package}" / f"m{module}.py", "import torch\n")
    copy = migrated(script, tmp_path / "out", cwd=root)
    assert (copy.root / "vendor").is_symlink()
    assert copy.linked < 20


# -- end to end -----------------------------------------------------------------------------

MODEL = """\
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()
"""

TRAIN = """\
import torch
import torch.nn.functional as F

from src.models.mlp import make_model

torch.manual_seed(0)
model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=float(CONFIG["lr"]), momentum=0.9)
inputs = torch.randn(64, 8)
targets = inputs.sum(dim=1, keepdim=True)
for step in range(int(CONFIG["steps"])):
    x = inputs[(step * 16) % 64 : (step * 16) % 64 + 16].cuda()
    y = targets[(step * 16) % 64 : (step * 16) % 64 + 16].cuda()
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.slow
def test_verify_runs_a_hydra_template_that_finds_its_root_by_the_marker(tmp_path, monkeypatch):
    root = tmp_path / "template"
    hydra_template(root)
    write(root / "src" / "models" / "mlp.py", MODEL)
    write(root / "src" / "train.py", FIND_ROOT + TRAIN)
    monkeypatch.chdir(root)
    result = run_verify("src/train.py", "--steps", "4")
    assert result.exit_code == 0, result.output
    assert "verdict: match" in result.stdout


def test_what_lies_beside_the_project_is_read_from_the_copy_as_from_the_original(tmp_path):
    """PyTorch's MNIST examples (and its FSDP tutorial) read ``../data`` from the script's folder:
    verify's copy, in a folder of its own, finds the user's data beside it."""
    script = write(tmp_path / "tutorial" / "train.py", 'print("data", open("../data/x.txt").read().strip())\n')
    write(tmp_path / "data" / "x.txt", "42\n")
    copy = migrate_project(
        script, None, tmp_path / "out" / "tutorial", Settings().migration(), cwd=script.parent, beside=True
    )
    assert run_copy(copy) == "data 42\n"
    assert (tmp_path / "out" / "data").is_symlink() and not (tmp_path / "out" / "tutorial").is_symlink()
