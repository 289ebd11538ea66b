"""Writing migrated text: through a temporary file in the same folder and ``os.replace``,
so that an interrupted run never leaves half a file; encoding and mode kept, and owner and
group where the process may set them (docs/configuration.md, what a run does to files)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from migrate_xla.sources.source import Source, SourceError


def write_atomic(path: Path, data: bytes, mode: int, owner: tuple[int, int] | None = None) -> None:
    """Replace ``path`` with ``data`` in one step, keeping ``mode``, and ``owner`` (uid, gid)
    where the process may give the file to them (root may; another user only a group of
    theirs, and nobody else: the file is then theirs, as any editor's save makes it)."""
    import tempfile  # only when writing: --check does not load it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".xla-migrate")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if owner is not None:
            try:
                os.chown(tmp, *owner)
            except PermissionError:
                pass
        os.chmod(tmp, mode)  # after chown, which clears the set-user-ID and set-group-ID bits
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_back(source: Source, text: str) -> None:
    """Write migrated text over the file it came from, refusing when that is unsafe.

    A symbolic link is written through: the file it points to gets the new text and
    the link stays a link. The new file keeps the old one's mode, owner and group (as far
    as the process may set them); another hard link to the old file keeps the old text.
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
        write_atomic(path, source.encode(text), source.mode, (st.st_uid, st.st_gid))
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None


def write_copy(target: Path, source: Source, text: str) -> None:
    """Write migrated text to ``target`` (``-o DIR``), creating folders as needed."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, source.encode(text), source.mode | stat.S_IWUSR)
    except OSError as exc:
        raise SourceError(f"cannot write {target}: {exc.strerror or exc}") from None
