"""Finding source files, and reading and writing them without losing anything.

Reading keeps what a rewrite must give back unchanged: the encoding (a BOM or a
PEP 263 coding cookie), the newline style (text is decoded without newline
translation) and the file mode. Writing goes through a temporary file in the same
folder and ``os.replace``, so an interrupted run never leaves half a file. A notebook
(``.ipynb``) is read as a ``Notebook`` (notebooks.py), a Source whose text is its code
cells as one program.
"""

from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import stat
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

SOURCE_SUFFIXES = (".py", ".ipynb")

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


class SourceError(Exception):
    """A file that cannot be read, decoded or written; the message says why."""


class Unit(NamedTuple):
    """A piece of a file that a person reads on its own: a notebook cell, or a whole .py file."""

    cell: int | None  # the notebook cell's number (1 is the first cell), None for a .py file
    text: str


@dataclass(frozen=True)
class Source:
    """One file's text and what is needed to write it back the same way.

    ``text`` is the Python program the engine migrates; the methods map a migrated
    program back to the file (a notebook overrides them).
    """

    path: Path
    text: str
    encoding: str  # "utf-8-sig" when the file starts with a BOM
    mode: int
    mtime_ns: int

    def encode(self, text: str) -> bytes:
        """The file's bytes for the (migrated) program ``text``."""
        return text.encode(self.encoding)

    def units(self, text: str) -> list[Unit]:
        """``text`` (this program or its migration) in the pieces diffs and findings name."""
        return [Unit(None, text)]

    def locate(self, diagnostics: list) -> list:
        """Findings at positions of the program, moved to their places in the file."""
        return diagnostics

    def file_lines(self, text: str) -> Callable[[int | None, int], int]:
        """For the file written from ``text``: (cell, line in the cell) -> line in the file."""
        return lambda cell, line: line


def read_source(path: Path) -> Source:
    try:
        st = path.stat()
        data = path.read_bytes()
    except FileNotFoundError:
        raise SourceError("file not found (removed during the run?)") from None
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if path.suffix == ".ipynb":
        from migrate_xla.notebooks import read_notebook  # only runs that meet a notebook import json

        return read_notebook(path, data, stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    text, encoding = decode(data)
    return Source(path, text, encoding, stat.S_IMODE(st.st_mode), st.st_mtime_ns)


def decode(data: bytes) -> tuple[str, str]:
    """Source bytes to (text, encoding), honouring a BOM or a coding cookie; newlines kept."""
    encoding = _detect_encoding(data)
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        hint = "" if encoding != "utf-8" else " (declare it with a PEP 263 coding comment)"
        raise SourceError(
            f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}{hint}"
        ) from None


# PEP 263: a coding comment on one of the first two lines.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")


def _detect_encoding(data: bytes) -> str:
    """The encoding a BOM or a coding cookie declares, else UTF-8 (PEP 263)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as exc:
        # tokenize also says "invalid or missing encoding declaration" for plain
        # non-UTF-8 bytes on the first lines; without a cookie, decoding says what is wrong.
        if any(_COOKIE.match(line) for line in data.removeprefix(codecs.BOM_UTF8).splitlines()[:2]):
            raise SourceError(f"bad coding cookie: {exc.msg}") from None
        return "utf-8"


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` in one step, keeping ``mode``."""
    import tempfile  # only when writing: --check does not load it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".xla-migrate")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_back(source: Source, text: str) -> None:
    """Write migrated text over the file it came from, refusing when that is unsafe.

    A symbolic link is written through: the file it points to gets the new text and
    the link stays a link.
    """
    path = Path(os.path.realpath(source.path))
    try:
        st = path.stat()
    except FileNotFoundError:
        raise SourceError("file was removed during the run; not written") from None
    if st.st_mtime_ns != source.mtime_ns:
        raise SourceError("file changed during the run; not written")
    if not st.st_mode & stat.S_IWUSR:
        raise SourceError("file is read-only; not written")
    try:
        write_atomic(path, source.encode(text), source.mode)
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None


def write_copy(target: Path, source: Source, text: str) -> None:
    """Write migrated text to ``target`` (``-o DIR``), creating folders as needed."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, source.encode(text), source.mode | stat.S_IWUSR)
    except OSError as exc:
        raise SourceError(f"cannot write {target}: {exc.strerror or exc}") from None


# -- finding files ---------------------------------------------------------------------


class Found(NamedTuple):
    """A file to process, and the argument it was found under (for ``-o`` mirroring)."""

    path: Path
    root: Path  # the directory argument, or the file's folder for a file argument


def find_sources(paths: list[Path], exclude: Patterns | None = None) -> Iterator[Found]:
    """Python files and notebooks under ``paths``: folders walked honouring .gitignore, files as given.

    ``exclude`` (the configuration's patterns) is one more ignore file, consulted last
    while walking; like the default excludes it does not apply to files named explicitly.
    Symbolic links met while walking are skipped (they may point outside the tree);
    a link given explicitly is followed, so the file it points to is migrated.
    """
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            candidates = ((Found(p, path), real) for p, real in _walk(path, exclude))
        else:
            candidates = iter([(Found(path, path.parent), path.resolve())])
        for found, key in candidates:
            if key not in seen:
                seen.add(key)
                yield found


def _walk(root: Path, exclude: Patterns | None) -> Iterator[tuple[Path, Path]]:
    """Each file under ``root`` with its resolved path. The walk follows no link, so a path
    below ``root`` resolves to ``root``'s resolution and the names walked: no ``resolve()``
    of every entry (a dozen ``lstat`` calls each; seconds on torch's 15,000 entries)."""
    yield from _walk_dir(root, root.resolve(), _ancestor_gitignores(root), exclude)


def _walk_dir(
    folder: Path, real: Path, ignores: list[Patterns], exclude: Patterns | None
) -> Iterator[tuple[Path, Path]]:
    own = Patterns.load(folder)
    if own is not None:
        ignores = [*ignores, own]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        path = Path(entry.path)
        resolved = real / entry.name
        is_dir = entry.is_dir()
        if is_dir and entry.name in DEFAULT_EXCLUDES:
            continue
        if _ignored(resolved, is_dir, ignores if exclude is None else [*ignores, exclude]):
            continue
        if is_dir:
            yield from _walk_dir(path, resolved, ignores, exclude)
        elif entry.name.endswith(SOURCE_SUFFIXES):
            yield path, resolved


def _ancestor_gitignores(root: Path) -> list[Patterns]:
    """The .gitignore files above ``root``, up to the top of its git repository.

    Outside a git repository, and when ``root`` is itself the top of one, only the
    tree's own .gitignore files count.
    """
    found = []
    folder = root.resolve()
    while not (folder / ".git").exists():
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
