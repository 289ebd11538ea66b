"""Finding the files a run gets: folders walked for ``.py`` and ``.ipynb`` files, and
frameworks' config files among the YAML ones (migrate_xla/engine/configs.py), honouring
``.gitignore`` files, the default excludes and the configuration's ``exclude``; files named
on the command line taken as given."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

SOURCE_SUFFIXES = (".py", ".ipynb")
# frameworks' config files are YAML (XLA827, XLA828): those of a kind are taken (_is_config)
CONFIG_SUFFIXES = (".yaml", ".yml")

# Folders never walked into (still processed when passed explicitly).
DEFAULT_EXCLUDES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "__pypackages__",
        "site-packages",
        ".eggs",
        ".ipynb_checkpoints",
    }
)


class Found(NamedTuple):
    """A file to process, and the argument it was found under (for ``-o`` mirroring)."""

    path: Path
    root: Path  # the directory argument, or the file's folder for a file argument


def find_sources(
    paths: list[Path],
    exclude: Sequence[Patterns] = (),
    unreadable: list[tuple[Path, str]] | None = None,
    is_config: Callable[[Path], bool] | None = None,
) -> Iterator[Found]:
    """Python files and notebooks under ``paths``: folders walked honouring .gitignore, files as given.

    ``exclude`` (the configuration's and the command line's patterns) are more ignore
    files, consulted last while walking; like the default excludes they do not apply to
    files named explicitly. Symbolic links met while walking are skipped (they may point
    outside the tree); a link given explicitly is followed, so the file it points to is
    migrated. A folder that cannot be listed is added to ``unreadable`` with the reason,
    and the walk goes on (its files are not skipped silently: the caller reports it). A YAML
    file met while walking is taken where ``is_config`` says it is a framework's config (the
    engine knows the kinds: migrate_xla/engine/configs.py); without it, none is.
    """
    seen: set[Path] = set()
    for path in paths:
        if os.path.isdir(path):  # False, not an error, for a path that cannot be looked at: reading it says why
            candidates = ((Found(p, path), real) for p, real in _walk(path, list(exclude), unreadable, is_config))
        else:
            candidates = iter([(Found(path, path.parent), path.resolve())])
        for found, key in candidates:
            if key not in seen:
                seen.add(key)
                yield found


def _walk(
    root: Path,
    exclude: list[Patterns],
    unreadable: list[tuple[Path, str]] | None,
    is_config: Callable[[Path], bool] | None,
) -> Iterator[tuple[Path, Path]]:
    """Each file under ``root`` with its resolved path. The walk follows no link, so a path
    below ``root`` resolves to ``root``'s resolution and the names walked: no ``resolve()``
    of every entry (a dozen ``lstat`` calls each; seconds on torch's 15,000 entries)."""
    yield from _walk_dir(root, root.resolve(), _ancestor_gitignores(root), exclude, unreadable, is_config)


def _walk_dir(
    folder: Path,
    real: Path,
    ignores: list[Patterns],
    exclude: list[Patterns],
    unreadable: list[tuple[Path, str]] | None,
    is_config: Callable[[Path], bool] | None,
) -> Iterator[tuple[Path, Path]]:
    own = Patterns.load(folder)
    if own is not None:
        ignores = [*ignores, own]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        if unreadable is not None:
            unreadable.append((folder, f"cannot read folder: {exc.strerror or exc}; its files were not migrated"))
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        path = Path(entry.path)
        resolved = real / entry.name
        is_dir = entry.is_dir()
        if is_dir and entry.name in DEFAULT_EXCLUDES:
            continue
        if _ignored(resolved, is_dir, [*ignores, *exclude] if exclude else ignores):
            continue
        if is_dir:
            yield from _walk_dir(path, resolved, ignores, exclude, unreadable, is_config)
        elif entry.name.endswith(SOURCE_SUFFIXES) or (
            entry.name.endswith(CONFIG_SUFFIXES) and is_config is not None and is_config(path)
        ):
            yield path, resolved


def _ancestor_gitignores(root: Path) -> list[Patterns]:
    """The .gitignore files above ``root``, up to the top of its git repository.

    Outside a git repository, and when ``root`` is itself the top of one, only the
    tree's own .gitignore files count.
    """
    found = []
    folder = root.resolve()
    while not os.path.exists(folder / ".git"):  # False where it cannot be looked at
        if folder.parent == folder:
            return []
        folder = folder.parent
        ignore = Patterns.load(folder)
        if ignore is not None:
            found.append(ignore)
    return found[::-1]


def _ignored(path: Path, is_dir: bool, ignores: list[Patterns]) -> bool:
    verdict = False
    for ignore in ignores:
        result = ignore.match(path, is_dir)
        if result is not None:
            verdict = result
    return verdict


class Patterns:
    """Patterns in .gitignore syntax (the subset projects use), relative to ``base``.

    Read from a .gitignore file, or given by the configuration (``exclude``,
    ``per-file-ignores``): a pattern without a slash matches a name at any depth,
    one with a slash is anchored at ``base``, ``**`` spans folders, ``!`` re-includes.
    """

    def __init__(self, base: Path, patterns: list[tuple[re.Pattern[str], bool, bool]]) -> None:
        self.base = base
        self.patterns = patterns  # (regex, negated, dir_only)

    @classmethod
    def load(cls, folder: Path) -> Patterns | None:
        try:
            lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        return cls.parse(folder, lines)

    @classmethod
    def parse(cls, base: Path, lines: Iterable[str]) -> Patterns:
        patterns = []
        for raw in lines:
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            line = line.removeprefix("\\")
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            if not line:
                continue
            regex = _glob_to_regex(line)
            if not anchored:
                regex = f"(?:.*/)?{regex}"
            patterns.append((re.compile(f"^{regex}$"), negated, dir_only))
        return cls(base.resolve(), patterns)

    def match(self, path: Path, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern says), for a
        resolved ``path``."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        return self._verdict(rel, is_dir)

    def covers(self, path: Path) -> bool:
        """Whether the patterns match the file ``path`` or a folder it is in (below ``base``)."""
        try:
            parts = path.resolve().relative_to(self.base).parts
        except ValueError:
            return False
        return any(self._verdict("/".join(parts[:depth]), depth < len(parts)) for depth in range(1, len(parts) + 1))

    def _verdict(self, rel: str, is_dir: bool) -> bool | None:
        verdict = None
        for regex, negated, dir_only in self.patterns:
            if dir_only and not is_dir:
                continue
            if regex.match(rel):
                verdict = not negated
        return verdict


def _glob_to_regex(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(glob[i]))
                i += 1
            else:
                out.append(fnmatch.translate(glob[i : end + 1])[4:-3])
                i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
