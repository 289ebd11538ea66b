"""The migrated copy of a script's project, where verify's migrated run finds what the original finds by its path.

- ``project_root``: the project its user would name, the nearest folder up from the script
  that holds a root marker (``.git``, ``pyproject.toml``, ``setup.py``, ``setup.cfg``,
  ``.project-root``, ``.here``); the script's own folder where none does.
- ``migrate_project``: the copy. Migrated, as the CLI migrates them (under the
  ``[tool.xla-migrate]`` the CLI would read): the ``.py`` files of the script's folder (of
  ``--project`` where given) and every file of the project the script imports, directly or
  through each other; the configuration's ``exclude`` copies a file as it is. Everything
  else is one symbolic link at its own relative path: hidden files, ``.git``, caches,
  virtual environments, data. A folder is made in the copy only where a written file or
  the run's working directory lies below it, so a large checkout costs the entries of a
  few folders, not a walk of its tree. What the run writes through a link lands in the
  user's tree, as the original's own writes do; what it creates in a made folder stays in
  the copy.
- What lies beside the project's root is linked beside the copy (verify's copy sits in a folder
  of its own), so that ``../data`` from the project reads the user's ``../data``.
- ``working_directory``: where a migrated run starts: the copy's folder that corresponds to
  the caller's working directory when that lies in the project, else the caller's.
"""

from __future__ import annotations

import ast
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrate_xla.app.project import Project, SettingsError
from migrate_xla.engine import configs
from migrate_xla.sources.discovery import find_sources
from migrate_xla.sources.writing import write_copy

# What marks a project's root: a repository, a package's metadata, the markers rootutils and
# pyprojroot walk up from a script to find (a Lightning + Hydra template's ``.project-root``)
ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", ".project-root", ".here")
# Not linked into a made folder: the user's bytecode of a file migrated beside it would be
# rewritten through the link; Python writes the copy's own
BYTECODE = "__pycache__"
# Files migrated past which a process pool migrates them (run.migrate_files): importing torch from
# its own checkout migrates 1,458 files (docs/performance.md)
POOLED = 32
# Each migrated script's working directory, for the run that starts it (working_directory)
_WORKING_DIRECTORIES: dict[Path, Path] = {}


class CopyError(Exception):
    """The project cannot be copied: the script lies outside it, its settings are bad, the script does not migrate."""


@dataclass
class Copy:
    """A migrated copy of a project."""

    script: Path  # the migrated script
    root: Path  # the copy of the project's root
    cwd: Path  # where the migrated run starts
    originals: dict[Path, Path] = field(default_factory=dict)  # each file written into the copy: the user's file
    linked: int = 0  # entries linked


def project_root(script: Path) -> Path:
    """The nearest folder up from ``script`` holding one of ROOT_MARKERS; its own folder where none does."""
    folder = script.resolve().parent
    for candidate in (folder, *folder.parents):
        if any(os.path.lexists(candidate / marker) for marker in ROOT_MARKERS):
            return candidate
    return folder


def working_directory(script: Path) -> str:
    """Where the run of ``script`` starts: the folder its copy set (migrate_project), else the caller's."""
    return str(_WORKING_DIRECTORIES.get(Path(script), Path.cwd()))


def migrate_project(
    script: Path,
    project: Path | None,
    out: Path,
    migration: dict[str, Any],
    cwd: Path | None = None,
    beside: bool = False,
) -> Copy:
    """Copy the project of ``script`` into ``out`` (which must not exist), migrated.

    ``project``: its root (``--project``), else ``project_root``. ``migration``: the migration
    settings given (verify's Settings.migration()), in place of the configuration's. ``cwd``:
    the caller's working directory (default: this process's). ``beside``: ``out``'s folder is
    the copy's own, and every entry beside the project's root is linked into it, so that a run
    that reads what lies next to the project (PyTorch's MNIST examples' ``../data``) finds it.
    """
    script = script.resolve()
    root = project.resolve() if project is not None else project_root(script)
    cwd = (cwd or Path.cwd()).resolve()
    try:
        script.relative_to(root)
    except ValueError:
        raise CopyError(f"{script} is not inside the project folder {root}") from None
    walked = root if project is not None else script.parent  # the folder whose files are all migrated
    try:
        run = Project.configured([walked], **migration)
    except SettingsError as exc:
        raise CopyError(str(exc)) from None
    # the paths found are resolved: the folder walked is, and the walk follows no link
    taken = {f.path for f in run.files}
    if script not in taken:  # the script is always migrated, whatever the configuration excludes
        run.files.append(next(iter(find_sources([script]))))
        taken.add(script)
    as_is = {
        f.path: None for f in find_sources([walked], is_config=configs.is_config_file) if f.path not in taken
    }  # in order
    excludes = run.settings.walk_excludes()
    for path in imported_files(script, [script.parent, root], root):
        if path in taken or path in as_is:
            continue
        if any(patterns.covers(path) for patterns in excludes):
            as_is[path] = None
        else:
            run.files.append(next(iter(find_sources([path]))))
            taken.add(path)
    originals: dict[Path, Path] = {}
    for path in as_is:  # what the configuration excludes runs as it is
        target = out / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        originals[target] = path
    # one process for a few files, as before; a pool (the CLI's) for a library the script imports from its checkout
    for result in run.migrate(jobs=1 if len(run.files) <= POOLED else None):
        if result.found is None:  # a folder that could not be listed: its files are not run either
            continue
        path = result.found.path
        target = out / path.relative_to(root)
        if result.error is not None:
            if path == script:
                raise CopyError(f"cannot migrate {script}: {result.error}")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)  # run unmigrated rather than missing
        else:
            write_copy(target, result.source, result.new_text)
        originals[target] = path
    folders = [target.relative_to(out).parent for target in originals]
    start = cwd
    if _inside(cwd, root):  # the run starts where the original does, in the copy
        folders.append(cwd.relative_to(root))
        start = out / folders[-1]
    made = {Path(".")}
    for folder in folders:  # each folder with a written file or the start below it
        while folder not in made:
            made.add(folder)
            folder = folder.parent
    linked = _link_the_rest(root, out, made, {t.relative_to(out) for t in originals})
    if beside:
        linked += _link_beside(root, out)
    migrated = out / script.relative_to(root)
    _WORKING_DIRECTORIES[migrated] = start
    return Copy(migrated, out, start, originals, linked)


def _link_the_rest(root: Path, out: Path, made: set[Path], written: set[Path]) -> int:
    """Make the folders ``made`` in ``out`` and link, in each, every entry of the project's
    folder that is neither written nor made: a folder whole (one link, whatever it holds), a
    file as itself. Returns the number of links."""
    linked = 0
    for folder in sorted(made):
        (out / folder).mkdir(parents=True, exist_ok=True)
        try:
            with os.scandir(root / folder) as entries:
                names = [(entry.name, entry.path, entry.is_dir()) for entry in entries]
        except OSError:
            continue  # a folder that cannot be listed: the original cannot read it either
        for name, path, is_dir in names:
            relative = folder / name
            if relative in written or relative in made or name == BYTECODE:
                continue
            (out / relative).symlink_to(path, target_is_directory=is_dir)
            linked += 1
    return linked


def _link_beside(root: Path, out: Path) -> int:
    """Link each entry of the folder that holds the project's root (the root itself aside) into the
    folder that holds the copy. Returns the number of links."""
    if root.parent == root:
        return 0
    try:
        with os.scandir(root.parent) as entries:
            names = [(entry.name, entry.path, entry.is_dir()) for entry in entries if entry.name != root.name]
    except OSError:
        return 0  # what the original cannot list, its run cannot read either
    for name, path, is_dir in names:
        (out.parent / name).symlink_to(path, target_is_directory=is_dir)
    return len(names)


def imported_files(script: Path, bases: list[Path], root: Path) -> list[Path]:
    """The files under ``root`` that ``script`` imports, directly or through each other: each
    module and the packages above it, found from ``bases`` (absolute imports) or from the
    importing file's package (relative ones). Read with ``ast``; nothing is imported."""
    found: list[Path] = []
    seen = {script}
    queue = [script]
    while queue:
        path = queue.pop(0)
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue  # the run says what is wrong with it
        for module in _imports(tree, path, bases):
            if module not in seen and _inside(module, root):
                seen.add(module)
                found.append(module)
                queue.append(module)
    return found


def _imports(tree: ast.Module, path: Path, bases: list[Path]) -> list[Path]:
    wanted: list[tuple[Path, list[str]]] = []  # (folder searched from, dotted parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted.extend((base, alias.name.split(".")) for alias in node.names for base in bases)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                searched = [path.parents[node.level - 1]] if node.level <= len(path.parents) else []
            else:
                searched = bases
            module = node.module.split(".") if node.module else []
            for base in searched:
                wanted.append((base, module))
                wanted.extend((base, [*module, alias.name]) for alias in node.names if alias.name != "*")
    files = []
    for base, parts in wanted:
        for depth in range(1, len(parts) + 1):
            stem = base.joinpath(*parts[:depth])
            for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
                if candidate.is_file():
                    files.append(candidate.resolve())
    return files


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
