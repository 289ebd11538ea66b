"""Finds the rules in ``codemods/`` and selects them by code prefix.

A family is a module directly under ``codemods/`` or a package there, whose modules
hold its rules; ``codemods/shared/`` holds what several families share, and no rules.
Adding a rule means adding a class to a family module, then regenerating the index the
pre-filter reads (migrate_xla/engine/prefilter.py): nothing else lists rules. Selection reads
the codes from that index, so that a run whose files wake no rule never imports the
rule modules (nor LibCST, which they import); the index also names the module that
defines each rule, so that a run imports only the modules of the rules its files wake
(``rules_of``). ``all_rules`` imports them all (docs, ``xla-migrate rules``, make_index).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from migrate_xla.engine import prefilter
from migrate_xla.rule.findings import RUNTIMES, SEVERITIES, TARGETS, RuleError

if TYPE_CHECKING:
    from migrate_xla.rule.api import Rule


# codemods/shared/: analyses and helpers several families share, not a family
SHARED = "shared"


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class defined in a ``codemods`` family (a module, or the modules of a package),
    in code order: every module imported (docs, ``rules``, make_index; a run imports only the
    modules of the rules its files wake, ``rules_of``)."""
    # imported here: a run whose files wake no rule never gets this far
    import importlib
    import pkgutil

    import codemods

    def family_modules():
        for info in pkgutil.iter_modules(codemods.__path__):
            if info.name == SHARED:
                continue
            family = f"codemods.{info.name}"
            yield family
            if info.ispkg:
                for sub in pkgutil.walk_packages(importlib.import_module(family).__path__, f"{family}."):
                    yield sub.name

    found: dict[str, type[Rule]] = {}
    for module in family_modules():
        for code, cls in _defined_in(module).items():
            if code in found:
                raise RuleError(
                    f"rule code {code} is defined twice: {found[code].__module__}.{found[code].__name__} and "
                    f"{module}.{cls.__name__}"
                )
            found[code] = cls
    return tuple(found[code] for code in sorted(found))


def rules_of(codes: Iterable[str]) -> tuple[type[Rule], ...]:
    """The rule classes of these codes, in their order: only the modules that define them are
    imported, found in the generated index (rule_index.py, which tests/test_prefilter.py
    keeps equal to what ``all_rules`` discovers)."""
    module_of = _modules()
    rules = []
    for code in codes:
        rule = _defined_in(module_of[code]).get(code)
        if rule is None:
            raise RuleError(
                f"{code} is not defined in {module_of[code]}, as migrate_xla/generated/rule_index.py says: regenerate it"
            )
        rules.append(rule)
    return tuple(rules)


@cache
def _modules() -> dict[str, str]:
    """Each rule's code and the module that defines it, from the index."""
    return {rule.CODE: rule.MODULE for rule in prefilter.indexed()}


@cache
def _defined_in(name: str) -> dict[str, type[Rule]]:
    """The rule classes module ``name`` defines (not those it imports), by code, each checked."""
    import importlib

    from migrate_xla.rule.api import Rule

    found: dict[str, type[Rule]] = {}
    for cls in vars(importlib.import_module(name)).values():
        if not isinstance(cls, type) or not issubclass(cls, Rule) or cls.__module__ != name or not cls.CODE:
            continue
        if cls.CODE in found:
            raise RuleError(
                f"rule code {cls.CODE} is defined twice: {name}.{found[cls.CODE].__name__} and {name}.{cls.__name__}"
            )
        if cls.SEVERITY not in SEVERITIES:
            raise RuleError(f"{cls.CODE}: unknown severity {cls.SEVERITY!r}")
        for attribute, known in (("TARGETS", TARGETS), ("RUNTIMES", RUNTIMES)):
            unknown = [value for value in getattr(cls, attribute) if value not in known]
            if unknown or not getattr(cls, attribute):
                raise RuleError(f"{cls.CODE}: {attribute} must name some of {', '.join(known)}, not {unknown}")
        found[cls.CODE] = cls
    return found


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
    """The rule of this code (imported alone), or of this name (every rule imported); None if none."""
    if code.upper() in _modules():
        return rules_of((code.upper(),))[0]
    return next((rule for rule in all_rules() if rule.NAME == code.lower()), None)
