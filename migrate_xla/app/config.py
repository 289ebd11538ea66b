"""The ``[tool.xla-migrate]`` table of the nearest pyproject.toml: found, read, checked.

The search starts at the folder that holds every path given (or the working
directory) and goes up, as ruff's does, to the first pyproject.toml that has the
table; it stops at the top of a git repository or of the file system. The table's
values become the run's ``Settings`` (migrate_xla/rule/settings.py), in place of the
defaults; options given on the command line then replace them key by key
(``Settings.override``, migrate_xla/app/project.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from migrate_xla.rule import settings as run_settings
from migrate_xla.rule.findings import RUNTIMES, TARGETS, RuleError
from migrate_xla.rule.settings import Settings

TABLE = "tool.xla-migrate"
KEYS = ("select", "ignore", "target", "runtime", "unsafe-fixes", "exclude", "per-file-ignores")


class ConfigError(Exception):
    """A pyproject.toml whose [tool.xla-migrate] table cannot be used; the message names file and key."""


def discover(paths: Sequence[Path]) -> Settings:
    """The settings of a run over ``paths`` (the working directory when there are none): the
    defaults, with the values of the nearest [tool.xla-migrate] table in their place."""
    found = find_pyproject(_common_folder(paths))
    return load(found) if found is not None else Settings()


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


def load(path: Path) -> Settings:
    """The [tool.xla-migrate] table of ``path``, every key checked (ConfigError names the bad one)."""
    table = _table(path) or {}

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{path}: [{TABLE}] {key}: {problem}")

    def codes(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(key, f"expected a list of rule codes or prefixes, got {_toml_repr(value)}")
        try:
            run_settings.select(value)
        except RuleError as exc:
            raise fail(key, str(exc)) from None
        return tuple(value)

    settings: dict[str, Any] = {"config": str(path)}
    for key, value in table.items():
        if key in ("select", "ignore"):
            settings[key] = codes(key, value)
        elif key == "target":
            if value not in TARGETS:
                raise fail(key, f"expected one of {', '.join(TARGETS)}, got {_toml_repr(value)}")
            settings[key] = value
        elif key == "runtime":
            if value not in RUNTIMES:
                raise fail(key, f"expected one of {', '.join(RUNTIMES)}, got {_toml_repr(value)}")
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
    return Settings(**settings)


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
