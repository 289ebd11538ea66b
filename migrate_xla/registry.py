"""Finds the rules in ``codemods/`` and selects them by code prefix.

A family is a module directly under ``codemods/`` or a package there, whose modules
hold its rules; ``codemods/shared/`` holds what several families share, and no rules.
Adding a rule means adding a class to a family module, then regenerating the index the
pre-filter reads (migrate_xla/prefilter.py): nothing else lists rules. Selection reads
the codes from that index, so that a run whose files wake no rule never imports the
rule modules (nor LibCST, which they import).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from migrate_xla import settings
from migrate_xla.findings import RUNTIMES, SEVERITIES, TARGETS, RuleError  # noqa: F401 (RuleError: registry.RuleError)

if TYPE_CHECKING:
    from migrate_xla.rule import Rule


# codemods/shared/: analyses and helpers several families share, not a family
SHARED = "shared"


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class defined in a ``codemods`` family (a module, or the modules of a package), in code order."""
    # imported here: a run whose files wake no rule never gets this far
    import importlib
    import inspect
    import pkgutil

    import codemods
    from migrate_xla.rule import Rule

    def family_modules():
        for info in pkgutil.iter_modules(codemods.__path__):
            if info.name == SHARED:
                continue
            family = importlib.import_module(f"codemods.{info.name}")
            yield family
            if info.ispkg:
                for sub in pkgutil.walk_packages(family.__path__, f"{family.__name__}."):
                    yield importlib.import_module(sub.name)

    found: dict[str, type[Rule]] = {}
    for module in family_modules():
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
            for attribute, known in (("TARGETS", TARGETS), ("RUNTIMES", RUNTIMES)):
                unknown = [value for value in getattr(cls, attribute) if value not in known]
                if unknown or not getattr(cls, attribute):
                    raise RuleError(f"{cls.CODE}: {attribute} must name some of {', '.join(known)}, not {unknown}")
            found[cls.CODE] = cls
    return tuple(found[code] for code in sorted(found))


def rules_of(codes: Iterable[str]) -> tuple[type[Rule], ...]:
    """The rule classes of these codes, in their order."""
    table = {rule.CODE: rule for rule in all_rules()}
    return tuple(table[code] for code in codes)


def family(rule: type[Rule]) -> str:
    """The family a rule belongs to (``devices`` for XLA1xx): the module or package under
    ``codemods`` its class is defined in."""
    parts = rule.__module__.split(".")
    return parts[1] if parts[0] == "codemods" and len(parts) > 1 else parts[-1]


def family_doc(rule: type[Rule]) -> str:
    """The docstring of the rule's family module (or package): its section of docs/rules.md."""
    import inspect
    import sys

    name = f"codemods.{family(rule)}" if rule.__module__.startswith("codemods.") else rule.__module__
    return inspect.cleandoc(sys.modules[name].__doc__ or "")


def by_code(code: str) -> type[Rule] | None:
    code = code.upper()
    for rule in all_rules():
        if rule.CODE == code or rule.NAME == code.lower():
            return rule
    return None


def select(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> tuple[str, ...]:
    """The codes of the enabled rules: those matching a ``select`` prefix and no ``ignore`` prefix
    (``settings.select``, which reads them from the index, not from the rules)."""
    return settings.select(select, ignore)
