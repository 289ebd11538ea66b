"""Migrating a project, as ``xla-migrate`` and ``xla-migrate verify`` both do it.

- ``migration_options``: the command-line options that say how code is migrated
  (``--target``, ``--runtime``, ``--select``, ``--ignore``, ``--unsafe-fixes``), declared once for both
  commands; the command gets them as one mapping of ``Settings`` fields, ``given``.
- ``configure``: the run's ``Settings`` (migrate_xla/rule/settings.py): the defaults, the
  ``[tool.xla-migrate]`` table of the nearest pyproject.toml, then what was given.
- ``Project``: the files of a run over some paths (folders walked honouring .gitignore
  and the settings' excludes) and their migration, in a process pool when there are many.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from migrate_xla.app import config
from migrate_xla.app.run import FileResult, migrate_files
from migrate_xla.engine import configs
from migrate_xla.rule.findings import RUNTIMES, TARGETS, RuleError
from migrate_xla.rule.settings import Settings
from migrate_xla.sources.discovery import Found, find_sources

# The Settings fields the migration options give, by the click parameter that gives each.
MIGRATION_OPTIONS = (
    click.option(
        "--target",
        type=click.Choice(TARGETS),
        help="single (the default): one XLA device; multiprocess: one process per device under torch_xla.launch; spmd: one process drives every device (XLA65x-XLA69x).",
    ),
    click.option(
        "--runtime",
        type=click.Choice(RUNTIMES),
        help="torch-xla (the default): PyTorch/XLA, lazy tensors on the 'xla' device; torch-tpu: TorchTPU, eager on the 'tpu' device (docs/runtimes.md).",
    ),
    click.option(
        "--select",
        multiple=True,
        metavar="CODES",
        help="Only these rule codes or prefixes (XLA1, XLA101), comma-separated.",
    ),
    click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes."),
    click.option(
        "--unsafe-fixes/--no-unsafe-fixes",
        default=None,
        help="Also apply fixes that may change behaviour (default: no).",
    ),
)
MIGRATION_FIELDS = ("target", "runtime", "select", "ignore", "unsafe_fixes")


class SettingsError(Exception):
    """Settings a run cannot use: a bad [tool.xla-migrate] table, or an unknown rule code given."""


def split(values: tuple[str, ...]) -> tuple[str, ...]:
    """The values of an option given several times, each comma-separated (rule codes, path patterns)."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def migration_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the migration options to a click command, where this decorator stands among its
    options; the command gets them as ``given``: the Settings fields given on the command
    line (an option not given is left out, and the configuration's value stays)."""

    @functools.wraps(command)
    def with_settings(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in MIGRATION_FIELDS}
        for name in ("select", "ignore"):
            values[name] = split(values[name]) or None
        return command(*args, given={name: value for name, value in values.items() if value is not None}, **kwargs)

    for option in reversed(MIGRATION_OPTIONS):
        with_settings = option(with_settings)
    return with_settings


def configure(paths: Sequence[Path], **given: Any) -> Settings:
    """The settings of a run over ``paths``: [tool.xla-migrate] of the nearest pyproject.toml
    (config.py), with each value ``given`` (Settings fields; None: not given) in its place."""
    try:
        return config.discover(paths).override(**given).checked()
    except (config.ConfigError, RuleError, ValueError) as exc:
        raise SettingsError(str(exc)) from None


class Project:
    """The files a run over ``paths`` migrates, and their migration under ``settings``.

    Folders are walked honouring .gitignore files and the settings' excludes; files named
    are always taken. Folders that could not be listed are kept in ``unreadable`` and come
    out of ``migrate`` as file errors.
    """

    def __init__(self, paths: Sequence[Path], settings: Settings) -> None:
        self.settings = settings
        self.unreadable: list[tuple[Path, str]] = []
        self.files: list[Found] = list(
            find_sources(list(paths), settings.walk_excludes(), self.unreadable, configs.is_config_file)
        )

    @classmethod
    def configured(cls, paths: Sequence[Path], **given: Any) -> Project:
        """The project of ``paths`` under the settings ``configure`` makes of them."""
        return cls(paths, configure(paths, **given))

    def migrate(self, jobs: int | None = None) -> Iterator[FileResult]:
        """Each file's result, in order (after the folders that could not be listed); nothing is written."""
        for folder, message in self.unreadable:
            yield FileResult(path=str(folder), error=message)
        yield from migrate_files(self.files, self.settings, jobs)
