"""The settings of a run: one object from the command line to the rule (docs/design.md, "Settings").

``Settings`` is built once a run: its defaults, then the ``[tool.xla-migrate]`` table of
the nearest pyproject.toml (config.py), then the options given on the command line, key
by key (``override``; migrate_xla/app/project.py declares those options for ``xla-migrate``
and ``xla-migrate verify`` alike). The same object goes to the worker processes (it
pickles), through the pre-filter and the engine, and to every rule as
``self.ctx.settings``; a file's own settings are the run's less the codes its
``per-file-ignores`` turn off (``for_file``).

It is a named tuple, not a dataclass (immutable, hashable, picklable all the same): a run
whose files wake no rule builds it too, and making a dataclass costs about a millisecond
at import (findings.py). It reads the rule codes from the generated index, never the rules.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from migrate_xla.rule.findings import RUNTIMES, TARGETS, RuleError
from migrate_xla.sources.discovery import Patterns


class Settings(NamedTuple):
    """How a run migrates: which rules, which fixes, to what form and runtime, over which files."""

    select: tuple[str, ...] = ()  # rule codes or prefixes (ALL: every rule); none: every rule
    ignore: tuple[str, ...] = ()  # rule codes or prefixes turned off
    unsafe_fixes: bool = False  # also apply the fixes that may change behaviour
    target: str = TARGETS[0]  # what the migrated code runs as (--target): single, multiprocess, spmd
    runtime: str = RUNTIMES[0]  # what it runs on: torch-xla (PyTorch/XLA) or torch-tpu (TorchTPU)
    exclude: tuple[str, ...] = ()  # skipped while walking, relative to the pyproject.toml's folder
    extend_exclude: tuple[str, ...] = ()  # --exclude: skipped as well, relative to the working directory
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (pattern, codes or prefixes), in order
    config: str | None = None  # the pyproject.toml the settings came from; None: defaults and command line
    # Repeat the rules over their own output until it changes no more (run.migrate_code); off for
    # --check, which reports what the rules find in the code as it is, as ruff's check does.
    fixpoint: bool = True

    @classmethod
    def of(cls, **given: Any) -> Settings:
        """Settings from keywords (lists welcome), checked: what tests and benchmarks build."""
        fields = {key: tuple(value) if key in _TUPLES and value is not None else value for key, value in given.items()}
        if fields.get("per_file_ignores"):
            fields["per_file_ignores"] = tuple((pattern, tuple(codes)) for pattern, codes in fields["per_file_ignores"])
        return cls().override(**fields).checked()

    def override(self, **given: Any) -> Settings:
        """These settings with each value given (not None) in place of theirs: the command line
        replaces the file's values key by key."""
        return self._replace(**{key: value for key, value in given.items() if value is not None})

    def checked(self) -> Settings:
        """These settings, once every value is known to be one a run can use (RuleError, ValueError)."""
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}: one of {', '.join(TARGETS)}")
        if self.runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {self.runtime!r}: one of {', '.join(RUNTIMES)}")
        if self.runtime != RUNTIMES[0] and self.target != TARGETS[0]:
            raise ValueError(
                f"--target {self.target} is a PyTorch/XLA form (torch_xla.launch, SPMD): with --runtime {self.runtime} "
                "the script keeps its own launch (torchrun, mp.spawn); use --target single"
            )
        self.codes  # noqa: B018 (an unknown code or prefix raises RuleError)
        for _, prefixes in self.per_file_ignores:
            select(tuple(prefixes))
        return self

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of the enabled rules, in code order: those a ``select`` prefix matches
        (every rule when there is none) and no ``ignore`` prefix matches."""
        return select(self.select, self.ignore)

    @property
    def root(self) -> str:
        """The folder ``exclude`` and ``per-file-ignores`` patterns start at: the pyproject.toml's,
        else the working directory."""
        return os.path.dirname(os.path.abspath(self.config)) if self.config is not None else os.getcwd()

    def for_file(self, path: str | os.PathLike) -> Settings:
        """These settings less the codes a per-file-ignores pattern covering ``path`` turns off."""
        if not self.per_file_ignores:
            return self
        root = self.root
        off = tuple(
            prefix
            for pattern, prefixes in self.per_file_ignores
            if _patterns(root, pattern).covers(Path(path))
            for prefix in prefixes
        )
        if not off:
            return self
        return self._replace(ignore=(*self.ignore, *select(off)))

    def walk_excludes(self) -> list[Patterns]:
        """What a walk skips beyond the defaults: ``exclude`` (relative to the pyproject.toml's
        folder), then ``extend_exclude`` (relative to the working directory, as ruff reads the
        command line's)."""
        own = [Patterns.parse(Path(self.root), self.exclude)] if self.exclude else []
        given = [Patterns.parse(Path.cwd(), self.extend_exclude)] if self.extend_exclude else []
        return [*own, *given]


_TUPLES = ("select", "ignore", "exclude", "extend_exclude")


@cache
def _patterns(root: str, pattern: str) -> Patterns:
    return Patterns.parse(Path(root), [pattern])


def select(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> tuple[str, ...]:
    """The codes of the rules matching a ``select`` prefix (every rule without one; ``ALL``
    matches every rule) and no ``ignore`` prefix, in code order; an unknown prefix is a RuleError.
    The codes are the generated index's (generated/rule_index.py): the rules are not imported."""
    return _select(tuple(select or ()), tuple(ignore or ()))


@cache
def _select(select: tuple[str, ...], ignore: tuple[str, ...]) -> tuple[str, ...]:
    from migrate_xla.generated.rule_index import RULES

    codes = tuple(row[0] for row in RULES)  # in code order, as the index is written
    wanted = [p.strip().upper() for p in select if p.strip()]
    unwanted = [p.strip().upper() for p in ignore if p.strip()]
    for prefix in [*wanted, *unwanted]:
        if prefix != "ALL" and not any(code.startswith(prefix) for code in codes):
            raise RuleError(f"unknown rule code or prefix: {prefix}")
    if wanted and "ALL" not in wanted:
        codes = tuple(c for c in codes if any(c.startswith(p) for p in wanted))
    return tuple(c for c in codes if not any(c.startswith(p) for p in unwanted))
