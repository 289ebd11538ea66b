"""Reading a file into a ``Source``, keeping what a rewrite must give back unchanged: the
encoding (a BOM or a PEP 263 coding cookie), the newline style (text is decoded without
newline translation) and the file mode. A ``.py`` file is read here, a notebook by
notebooks.py: two readers of one source type."""

from __future__ import annotations

import codecs
import io
import re
import stat
import tokenize
from pathlib import Path

from migrate_xla.sources.source import Source, SourceError


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
        from migrate_xla.sources.notebooks import read_notebook  # only runs that meet a notebook import json

        return read_notebook(path, data, stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    text, encoding = decode(data, python=path.suffix not in (".yaml", ".yml"))
    return Source(path, text, encoding, stat.S_IMODE(st.st_mode), st.st_mtime_ns)


def decode(data: bytes, python: bool = True) -> tuple[str, str]:
    """Source bytes to (text, encoding), honouring a BOM or a coding cookie; newlines kept.
    ``python``: the error's hint names PEP 263 (not for an Accelerate config, which is YAML)."""
    encoding = _detect_encoding(data)
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        hint = "" if encoding != "utf-8" or not python else " (declare it with a PEP 263 coding comment)"
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
