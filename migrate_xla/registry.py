"""Finds the rules in ``codemods/`` and selects them by code prefix.

Adding a rule means adding a class to a family module: nothing else lists rules.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import lru_cache
from typing import Iterable

import codemods
from migrate_xla.rule import SEVERITIES, Rule


class RuleError(Exception):
    """A broken rule set (duplicate code) or a selection that names no rule."""


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class defined in a ``codemods`` module, in code order."""
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(codemods.__path__):
        module = importlib.import_module(f"codemods.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, Rule) or cls.__module__ != module.__name__ or not cls.CODE:
                continue
            if cls.CODE in found and found[cls.CODE] is not cls:
                raise RuleError(
                    f"rule code {cls.CODE} is defined twice: "
                    f"{found[cls.CODE].__module__}.{found[cls.CODE].__name__} and "
                    f"{module.__name__}.{cls.__name__}"
                )
            if cls.SEVERITY not in SEVERITIES:
                raise RuleError(f"{cls.CODE}: unknown severity {cls.SEVERITY!r}")
            found[cls.CODE] = cls
    return tuple(found[code] for code in sorted(found))


def family(rule: type[Rule]) -> str:
    """The family module a rule belongs to (``devices`` for XLA1xx)."""
    return rule.__module__.rsplit(".", 1)[-1]


def by_code(code: str) -> type[Rule] | None:
    code = code.upper()
    for rule in all_rules():
        if rule.CODE == code or rule.NAME == code.lower():
            return rule
    return None


def select(
    select: Iterable[str] | None = None, ignore: Iterable[str] | None = None
) -> tuple[type[Rule], ...]:
    """The enabled rules: those matching a ``select`` prefix and no ``ignore`` prefix."""
    rules = all_rules()
    wanted = [p.strip().upper() for p in (select or ()) if p.strip()]
    unwanted = [p.strip().upper() for p in (ignore or ()) if p.strip()]
    for prefix in [*wanted, *unwanted]:
        if prefix != "ALL" and not any(r.CODE.startswith(prefix) for r in rules):
            raise RuleError(f"unknown rule code or prefix: {prefix}")
    if wanted and "ALL" not in wanted:
        rules = tuple(r for r in rules if any(r.CODE.startswith(p) for p in wanted))
    return tuple(r for r in rules if not any(r.CODE.startswith(p) for p in unwanted))
