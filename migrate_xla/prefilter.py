"""Which rules a file wakes, decided without LibCST and without the rules themselves.

A rule acts on a file only if one of its TRIGGERS and each of its REQUIRES occur in it
(migrate_xla/rule.py), and a file that wakes no enabled rule is not parsed at all: most
files of a big tree, and most pre-commit runs. So that such a run imports neither LibCST
nor the rule modules, what the pre-filter reads of each rule (code, targets, triggers,
requires) is kept in ``rule_index.py``, generated from the rules by make_index.py:

    .venv/bin/python -m migrate_xla.make_index     (or: make docs)

tests/test_prefilter.py fails when the index no longer says what the rules say. Rule
selection (``--select``) reads the codes from it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple


class Entry(NamedTuple):
    """What the pre-filter reads of a rule, under the rule's own attribute names (so that
    ``woken`` takes rule classes as well)."""

    CODE: str
    TARGETS: tuple[str, ...]
    TRIGGERS: tuple[str, ...]
    REQUIRES: tuple[str, ...]


def entry(rule) -> Entry:
    """A rule class's entry in the index."""
    return Entry(rule.CODE, tuple(rule.TARGETS), tuple(rule.TRIGGERS), tuple(rule.REQUIRES))


@cache
def indexed() -> tuple[Entry, ...]:
    """Every rule's entry, in code order, as the generated index has it."""
    from migrate_xla.rule_index import RULES

    return tuple(Entry(*row) for row in RULES)


@cache
def enabled(codes: tuple[str, ...], target: str) -> tuple[Entry, ...]:
    """The entries of the rules ``codes`` selects that ``target`` runs (a target's own rules only under it)."""
    wanted = set(codes)
    return tuple(rule for rule in indexed() if rule.CODE in wanted and target in rule.TARGETS)


@cache
def patterns_of(rule) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The rule's TRIGGERS and its REQUIRES, compiled one by one: a pattern led by a literal
    is searched for that literal at C speed; a union of them is not (it tries each position)."""
    return tuple(map(re.compile, rule.TRIGGERS)), tuple(map(re.compile, rule.REQUIRES))


def woken(rules: Sequence, text: str) -> list:
    """The rules (entries or rule classes) whose own triggers occur in ``text`` (one of
    TRIGGERS and each of REQUIRES): a necessary condition for a rule to act; a file that
    wakes none is not parsed, and on average a parsed file wakes a few (4 in torch's own sources)."""
    found = []
    seen: dict[str, bool] = {}  # rules share patterns (``cuda`` as a word, ``.cuda(``)
    words: set[str] | None = None

    def occurs(pattern: str) -> bool:
        nonlocal words
        hit = seen.get(pattern)
        if hit is None:
            kind, what = _test(pattern)
            if kind == "words":
                if words is None:
                    words = set(_WORD.findall(text))
                hit = not words.isdisjoint(what)
            elif kind == "text":
                hit = any(literal in text for literal in what)
            else:
                start, source = what
                hit = start in text and _compiled(source).search(text) is not None
            seen[pattern] = hit
        return hit

    for rule in rules:
        # REQUIRES first: they are fewer, often shared (``cuda`` as a word), and a file
        # without them needs none of the rule's TRIGGERS compiled
        if all(map(occurs, rule.REQUIRES)) and any(map(occurs, rule.TRIGGERS)):
            found.append(rule)
    return found


# Most patterns need no regex: ``words(...)`` of rule.py (names, each as a whole word) is
# looked up among the text's words, and an alternation of literals (``no_grad|inference_mode``,
# ``\.cuda\(``) is found with ``in``; a regex whose every match starts with a literal
# (``load(?<!\wload)\(``) is compiled only for a text that holds the literal. Each answers
# exactly as ``re.search`` would; compiling the patterns is most of the pre-filter of a
# pre-commit run, and scanning the text once for each name most of a big tree's.
_WORD = re.compile(r"\w+")
_SPECIAL = frozenset("\\.^$*+?{}[]()|")
_QUANTIFIERS = frozenset("?*+{")


@cache
def _test(pattern: str) -> tuple[str, object]:
    """How to tell whether ``pattern`` occurs in a text: ("words", names), ("text",
    literals) or ("regex", (a literal every match starts with, or "", the pattern))."""
    if pattern.startswith("(?:") and pattern.endswith(")\\b"):
        names = []
        for part in pattern[3:-3].split("|"):
            name, mark, rest = part.partition("(?<!\\w")
            if not mark or rest != f"{name})" or not _WORD.fullmatch(name):
                break
            names.append(name)
        else:
            return "words", frozenset(names)
    literals = [_literal(part) for part in pattern.split("|")]
    if all(literal is not None for literal in literals):
        return "text", tuple(literals)
    return "regex", ("" if "|" in pattern else _literal(pattern, prefix=True), pattern)


def _literal(pattern: str, prefix: bool = False) -> str | None:
    """The text ``pattern`` matches, when it is a plain literal (punctuation may be escaped);
    None when it is not. With ``prefix``, the literal it starts with (a quantified last
    character left out), "" when none."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and not (pattern[i + 1].isascii() and pattern[i + 1].isalnum()):
            out.append(pattern[i + 1])
            i += 2
        elif char not in _SPECIAL:
            out.append(char)
            i += 1
        elif prefix:
            return "".join(out[:-1] if char in _QUANTIFIERS else out)
        else:
            return None
    return "".join(out)


_compiled = cache(re.compile)
