"""Cost of verify's migrated copy of a large project (migrate_xla/verify/project_copy.py).

The project is a checkout of a few thousand files: by default the installed torch package
(13,500 files, 2,000 of them Python), hard-linked into a temporary folder (no bytes
copied; a copy where hard links cannot be made), with a root marker (``.project-root``), a
``.git`` folder of 2,000 objects, a ``.venv`` and an ``examples/train.py`` added; ``--tree
DIR`` takes another tree. The script is copied as ``xla-migrate verify`` copies it, from
the project's root as working directory:

- ``examples/train.py``, a GPU script that imports nothing of the project (its ``import
  torch`` is the installed torch): its folder is migrated, the rest linked (best of
  ``--runs``);
- with ``--import-library``, the worst case: the tree under ``project/`` by its own name
  and the script importing it from there, as a library's example imports the library from
  its checkout (``import torch`` of the checkout): every file that import reaches, directly
  or through each other, is migrated too (once: minutes).

It prints the seconds, the files migrated and the links made, against the files of the
project; and, for scale, the seconds that walking the project for its Python files alone
takes (what migrating every file of it would start with).

    .venv/bin/python benchmarks/bench_project_copy.py
    .venv/bin/python benchmarks/bench_project_copy.py --import-library
    .venv/bin/python benchmarks/bench_project_copy.py --tree ~/src/pytorch_geometric/torch_geometric --import-library
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from migrate_xla.sources.discovery import find_sources  # noqa: E402
from migrate_xla.verify.project_copy import migrate_project  # noqa: E402

TRAIN = """\
import torch

model = torch.nn.Linear(8, 1).cuda()
"""
TRAIN_WITH_LIBRARY = """\
import {name}  # the library, from the checkout (the project's root is on the path)

model = torch.nn.Linear(8, 1).cuda()
"""


def default_tree() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        sys.exit("torch is not installed here: give --tree DIR")
    return Path(spec.origin).parent


def link_tree(source: Path, dest: Path) -> None:
    """``source`` at ``dest`` by hard links (a copy across file systems), its links kept as links."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, symlinks=True, copy_function=link)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="the checkout (default: the installed torch package)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--import-library", action="store_true", help="also a script importing the tree (minutes)")
    options = parser.parse_args()
    tree = (options.tree or default_tree()).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-project-copy-") as tmp:
        cases = [("project", tree.name, "train.py", TRAIN, options.runs)]
        if options.import_library:
            cases.append(
                ("project-with-library", f"project-with-library/{tree.name}", "train.py", TRAIN_WITH_LIBRARY, 1)
            )
        for name, place, script, text, runs in cases:
            root = Path(tmp) / name
            started = time.perf_counter()
            link_tree(tree, Path(tmp) / place)
            if place == tree.name:  # the tree is the project
                (Path(tmp) / place).rename(root)
            print(f"{name}: {tree} linked in {time.perf_counter() - started:.1f} s")
            (root / ".project-root").write_text("")
            for index in range(2000):  # a repository's objects: linked whole, never walked
                objects = root / ".git" / "objects" / f"{index % 256:02x}"
                objects.mkdir(parents=True, exist_ok=True)
                (objects / f"{index:038x}").write_bytes(b"x" * 64)
            (root / ".venv").mkdir()
            (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
            (root / "examples").mkdir()
            (root / "examples" / script).write_text(text.format(name=tree.name))
            files = sum(len(names) for _, _, names in os.walk(root))
            started = time.perf_counter()
            python_files = sum(1 for _ in find_sources([root]))
            walk_s = time.perf_counter() - started
            print(f"  {files} files, {python_files} Python files; walking it for them: {walk_s:.2f} s")
            times = []
            for run in range(runs):
                out = Path(tmp) / f"copy-{name}-{run}"
                started = time.perf_counter()
                copy = migrate_project(root / "examples" / script, None, out, {}, cwd=root)
                times.append(time.perf_counter() - started)
            cpu = os.times()
            print(
                f"  examples/{script}: copy {min(times):.2f} s (best of {runs}: {', '.join(f'{t:.2f}' for t in times)}), "
                f"{len(copy.originals)} files migrated, {copy.linked} links; this process's CPU so far "
                f"{cpu.user + cpu.system + cpu.children_user + cpu.children_system:.1f} s"
            )


if __name__ == "__main__":
    main()
