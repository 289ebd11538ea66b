"""The ``[tool.xla-migrate]`` table of the nearest pyproject.toml: found, read, checked.

The search starts at the folder that holds every path given (or the working
directory) and goes up, as ruff's does, to the first pyproject.toml that has the
table; it stops at the top of a git repository or of the file system. Options given
on the command line replace the file's values key by key (``Config.override``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from migrate_xla import registry
from migrate_xla.findings import TARGETS
from migrate_xla.run import Options, options_for
from migrate_xla.sources.discovery import Patterns

TABLE = "tool.xla-migrate"
KEYS = ("select", "ignore", "target", "unsafe-fixes", "exclude", "per-file-ignores")


class ConfigError(Exception):
    """A pyproject.toml whose [tool.xla-migrate] table cannot be used; the message names file and key."""


class Config(NamedTuple):
    """Settings for one run: the defaults, then the file's table, then the command line."""

    path: Path | None = None  # the pyproject.toml they came from; None: defaults only
    select: tuple[str, ...] = ()  # rule codes or prefixes; none: every rule
    ignore: tuple[str, ...] = ()
    target: str = TARGETS[0]
    unsafe_fixes: bool = False
    exclude: tuple[str, ...] = ()  # patterns skipped while walking, beyond the default excludes
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (pattern, codes or prefixes)

    @property
    def root(self) -> Path:
        """The folder that ``exclude`` and ``per-file-ignores`` patterns are relative to."""
        return self.path.parent if self.path is not None else Path.cwd()

    def override(self, **given: Any) -> Config:
        """These settings with every option given on the command line (not None) in place of the file's."""
        return self._replace(**{key: value for key, value in given.items() if value is not None})

    def options(self) -> Options:
        return options_for(
            self.select, self.ignore, self.unsafe_fixes, self.target, self.per_file_ignores, self.root.resolve()
        )

    def exclude_patterns(self) -> Patterns | None:
        return Patterns.parse(self.root, self.exclude) if self.exclude else None

    def walk_excludes(self, given: Sequence[str] = ()) -> list[Patterns]:
        """What a walk skips beyond the defaults: ``exclude`` (relative to the pyproject.toml's
        folder), then the patterns given with ``--exclude`` (relative to the working directory,
        as ruff reads the command line's)."""
        own = self.exclude_patterns()
        return [*([own] if own else []), *([Patterns.parse(Path.cwd(), given)] if given else [])]


def discover(paths: Sequence[Path]) -> Config:
    """The configuration for a run over ``paths`` (the working directory when there are none)."""
    found = find_pyproject(_common_folder(paths))
    return load(found) if found is not None else Config()


def _common_folder(paths: Sequence[Path]) -> Path:
    # os.path.isdir: False, not an error, for a path that cannot be looked at (the run reports it)
    folders = [os.path.abspath(p if os.path.isdir(p) else p.parent) for p in paths if str(p) != "-"]
    return Path(os.path.commonpath(folders)) if folders else Path.cwd()


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` with a [tool.xla-migrate] table."""
    folder = start.resolve()
    while True:
        candidate = folder / "pyproject.toml"
        if os.path.isfile(candidate) and _table(candidate) is not None:
            return candidate
        if os.path.exists(folder / ".git") or folder.parent == folder:
            return None
        folder = folder.parent


def _table(path: Path) -> dict | None:
    # imported here: 10 ms of start-up that a run without a pyproject.toml does not need
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same parser, before it joined the standard library
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("xla-migrate")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [{TABLE}] must be a table")
    return table


def load(path: Path) -> Config:
    """The [tool.xla-migrate] table of ``path``, every key checked (ConfigError names the bad one)."""
    table = _table(path) or {}

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{path}: [{TABLE}] {key}: {problem}")

    def codes(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(key, f"expected a list of rule codes or prefixes, got {_toml_repr(value)}")
        try:
            registry.select(value)
        except registry.RuleError as exc:
            raise fail(key, str(exc)) from None
        return tuple(value)

    settings: dict[str, Any] = {"path": path}
    for key, value in table.items():
        if key in ("select", "ignore"):
            settings[key] = codes(key, value)
        elif key == "target":
            if value not in TARGETS:
                raise fail(key, f"expected one of {', '.join(TARGETS)}, got {_toml_repr(value)}")
            settings[key] = value
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise fail(key, f"expected true or false, got {_toml_repr(value)}")
            settings["unsafe_fixes"] = value
        elif key == "exclude":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise fail(key, f"expected a list of path patterns, got {_toml_repr(value)}")
            settings[key] = tuple(value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise fail(key, f'expected a table of pattern = ["CODE", ...], got {_toml_repr(value)}')
            settings["per_file_ignores"] = tuple(
                (pattern, codes(f'{key} "{pattern}"', prefixes)) for pattern, prefixes in value.items()
            )
        else:
            raise fail(key, f"unknown key (known: {', '.join(KEYS)})")
    return Config(**settings)


def _toml_repr(value: Any) -> str:
    """A value as it was written in TOML, near enough for an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_repr(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_repr(v)}" for k, v in value.items()) + "}"
    return str(value)
