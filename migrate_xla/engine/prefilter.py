"""Which rules a file wakes, decided without LibCST and without the rules themselves.

A rule acts on a file only if the file names one of the words of GATE (torch, cuda, ...:
no rule acts on code that is no PyTorch GPU code) and one of the rule's TRIGGERS and each
of its REQUIRES occur in it (migrate_xla/rule/api.py); a file that wakes no enabled rule is
not parsed at all: most files of a big tree, and most pre-commit runs. So that such a run imports neither LibCST
nor the rule modules, what the pre-filter reads of each rule (code, targets, triggers,
requires, runtimes) is kept in ``rule_index.py``, generated from the rules by make_index.py,
with the module that defines the rule (a file that wakes a few rules imports only theirs):

    .venv/bin/python -m migrate_xla.generators.make_index     (or: make docs)

tests/test_prefilter.py fails when the index no longer says what the rules say. Rule
selection (``--select``) reads the codes from it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from migrate_xla.rule.findings import RUNTIMES


class Entry(NamedTuple):
    """What the pre-filter reads of a rule, under the rule's own attribute names (so that
    ``woken`` takes rule classes as well), and the module that defines it (what
    registry.rules_of imports for the rules a file wakes, and no other)."""

    CODE: str
    TARGETS: tuple[str, ...]
    TRIGGERS: tuple[str, ...]
    REQUIRES: tuple[str, ...]
    RUNTIMES: tuple[str, ...] = RUNTIMES
    MODULE: str = ""


def entry(rule) -> Entry:
    """A rule class's entry in the index."""
    read = (tuple(rule.TARGETS), tuple(rule.TRIGGERS), tuple(rule.REQUIRES), tuple(rule.RUNTIMES))
    return Entry(rule.CODE, *read, rule.__module__)


@cache
def indexed() -> tuple[Entry, ...]:
    """Every rule's entry, in code order, as the generated index has it."""
    from migrate_xla.generated.rule_index import RULES

    return tuple(Entry(*row) for row in RULES)


@cache
def enabled(codes: tuple[str, ...], target: str, runtime: str = RUNTIMES[0]) -> tuple[Entry, ...]:
    """The entries of the rules ``codes`` selects that serve ``target`` and ``runtime`` (a
    target's own rules only under it, a runtime's own rules only for it)."""
    wanted = set(codes)
    return tuple(
        rule for rule in indexed() if rule.CODE in wanted and target in rule.TARGETS and runtime in rule.RUNTIMES
    )


@cache
def patterns_of(rule) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The rule's TRIGGERS and its REQUIRES, compiled one by one: a pattern led by a literal
    is searched for that literal at C speed; a union of them is not (it tries each position)."""
    return tuple(map(re.compile, rule.TRIGGERS)), tuple(map(re.compile, rule.REQUIRES))


# Words one of which any file a rule acts on spells: the code the rules migrate is PyTorch
# code for NVIDIA GPUs, and it names torch (``import torch``, ``torch_xla``, ``torchrun``,
# ``torchvision``), CUDA (``.cuda()``, ``"cuda:0"``, ``CUDA_VISIBLE_DEVICES``), an NVIDIA
# library (NCCL, apex, Triton, NVTX, CuPy, NVML, ``nvidia-smi``, GPUtil), pinned memory, or
# calls autograd (``loss.backward()``: a project's training helper handed its model and
# device), or a training framework that places the model itself (Lightning, Hugging Face's
# ``TrainingArguments`` and ``from_pretrained``, Accelerate's ``Accelerator``: a script of pure
# framework code may never spell torch); a file that names this tool's codes (a noqa comment
# for XLA201) is about the tool.
# Rules that match calls by shape (``.step(``, ``x[mask]``, ``.to(rank)``, ``print(``)
# would otherwise wake in any file: most files of a repository name none of these words,
# and none of them is then parsed (nor LibCST imported). tests/test_prefilter.py checks
# the fixtures and what a plain file costs.
GATE = (
    "torch",
    "cuda",
    "CUDA",
    "nccl",
    "apex",
    "triton",
    "nvidia",
    "nvtx",
    "cupy",
    "nvml",
    "GPUtil",
    "pin_memory",
    ".backward(",
    "XLA",
    "xla-migrate",
    "lightning",
    "TrainingArguments",
    "from_pretrained",
    "Accelerator",
)


def gated(text: str) -> bool:
    """Whether ``text`` names a word of GATE, without which no rule wakes."""
    return any(word in text for word in GATE)


def woken(rules: Sequence, text: str) -> list:
    """The rules (entries or rule classes) that act on ``text``: none when it names no word
    of GATE, else those whose own triggers occur in it (``triggered``). A file that wakes
    none is not parsed, and on average a parsed file wakes a few (4 in torch's own sources)."""
    return triggered(rules, text) if gated(text) else []


def triggered(rules: Sequence, text: str) -> list:
    """The rules whose own triggers occur in ``text`` (one of TRIGGERS and each of
    REQUIRES): a necessary condition for a rule to act."""
    found = []
    seen: dict[str, bool] = {}  # rules share patterns (``cuda`` as a word, ``.cuda(``)
    words: set[str] | None = None

    def text_words() -> set[str]:
        nonlocal words
        if words is None:
            words = set(_WORD.findall(text))
        return words

    def has_word(names: frozenset[str]) -> bool:
        if words is None:
            found = _first_occurrences(text, names)
            if found is not None:
                return found  # most files: no need to list the text's words
        return not text_words().isdisjoint(names)

    def may_hold(literal: str) -> bool:
        """False where a word ``literal`` holds between two non-word characters of its own (``cuda``
        in ``.cuda(``) is not one of the text's words: then it cannot occur, and no scan is needed."""
        inner = _inner_words(literal)
        return not inner or inner <= text_words()

    def occurs(pattern: str) -> bool:
        hit = seen.get(pattern)
        if hit is None:
            hit = False
            for kind, what in _tests(pattern):
                if kind == "text":
                    hit = any(may_hold(literal) and literal in text for literal in what)
                elif kind == "absent":
                    hit = not any(literal in text for literal in what)
                elif kind == "words":
                    hit = has_word(what)
                else:
                    starts, source = what
                    hit = any(may_hold(start) and start in text for start in starts)
                    hit = hit and _compiled(source).search(text) is not None
                if hit:
                    break
            seen[pattern] = hit
        return hit

    for rule in rules:
        # REQUIRES first: they are fewer, often shared (``cuda`` as a word), and a file
        # without them needs none of the rule's TRIGGERS compiled
        if all(map(occurs, rule.REQUIRES)) and any(map(occurs, rule.TRIGGERS)):
            found.append(rule)
    return found


# Most patterns need no regex. A pattern is read as its top-level alternatives, each
# tested its cheapest way: ``words(...)`` of rule.py (names, each as a whole word) and
# ``name(?<!\wname)\b`` are looked up among the text's words; a literal (``\.cuda\(``, and
# a few characters to choose from: ``['"]xla['"]``) is found with ``in`` (not even scanned for
# where a word it holds between two non-word characters of its own is none of the text's:
# ``_inner_words``), and so is its absence, ``\A(?![\s\S]*LITERAL)``; any other regex is
# compiled only for a text that holds a literal every match of it starts with. Each answers exactly as ``re.search`` would;
# compiling the patterns is most of the pre-filter of a pre-commit run, and scanning the
# text once for each name most of a big tree's.
_WORD = re.compile(r"\w+")
_SPECIAL = frozenset("\\.^$*+?{}[]()|")
_QUANTIFIERS = frozenset("?*+{")
_COST = {"text": 0, "absent": 0, "words": 1, "regex": 2}
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_ABSENT = "\\A(?![\\s\\S]*"
_MAX_LITERALS = 16


@cache
def _tests(pattern: str) -> tuple[tuple[str, object], ...]:
    """How to tell whether ``pattern`` occurs in a text: a test for each of its top-level
    alternatives, cheapest first: ("words", names), ("text", literals), ("absent",
    literals) or ("regex", (literals every match starts with, the alternative)). The rules'
    patterns are read once, by make_index.py, into the index (``TESTS``): reading them all took
    a tenth of a one-file run's engine."""
    known = _indexed_tests().get(pattern)
    return known if known is not None else tests_of(pattern)


@cache
def _indexed_tests() -> dict[str, tuple[tuple[str, object], ...]]:
    """The index's tests of the rules' patterns, a words test's names as a frozenset."""
    from migrate_xla.generated.rule_index import TESTS

    return {
        pattern: tuple((kind, frozenset(what) if kind == "words" else what) for kind, what in tests)
        for pattern, tests in TESTS.items()
    }


def tests_of(pattern: str) -> tuple[tuple[str, object], ...]:
    """``_tests(pattern)``, read from the pattern itself."""
    if _GLOBAL_FLAGS.match(pattern) or re.search(r"\\\d|\(\?P=", pattern):
        return (("regex", (("",), pattern)),)  # flags or back-references bind the alternatives together
    return tuple(sorted(map(_test, _alternatives(pattern)), key=lambda test: _COST[test[0]]))


def _test(branch: str) -> tuple[str, object]:
    if branch.endswith("\\b"):
        inner = branch[:-2]
        names = _word_names(inner[3:-1] if inner.startswith("(?:") and inner.endswith(")") else inner)
        if names:
            return "words", names
    if branch.startswith(_ABSENT) and branch.endswith(")"):
        literals, whole = _literals(branch[len(_ABSENT) : -1])
        if whole:
            return "absent", literals
    literals, whole = _literals(branch)
    return ("text", literals) if whole else ("regex", (literals, branch))


def _word_names(pattern: str) -> frozenset[str] | None:
    """The names of ``name(?<!\\wname)|...`` (a ``\\b`` after it makes each a whole word); None
    when ``pattern`` is not that."""
    names = []
    for part in pattern.split("|"):
        name, mark, rest = part.partition("(?<!\\w")
        if not mark or rest != f"{name})" or not _WORD.fullmatch(name):
            return None
        names.append(name)
    return frozenset(names)


@cache
def _inner_words(literal: str) -> frozenset[str]:
    """The words of ``literal`` between two non-word characters of its own: each is a whole word of
    any text the literal occurs in (``cuda`` of ``.cuda(``; not ``torch`` of ``torch.cu``, which may
    end a longer word there)."""
    runs = [match.span() for match in _WORD.finditer(literal)]
    return frozenset(literal[start:end] for start, end in runs if start > 0 and end < len(literal))


def _first_occurrences(text: str, names: frozenset[str], tries: int = 4) -> bool | None:
    """Whether one of ``names`` occurs in ``text`` as a whole word, told from their first few
    occurrences; None when those do not tell (a name seen only inside longer words so far)."""
    for name in names:
        end = -1
        for _ in range(tries):
            start = text.find(name, end + 1)
            if start < 0:
                break
            end = start + len(name)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
                return True  # `\w` is a character that is alphanumeric (as str.isalnum) or `_`
        else:
            return None
    return False


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (not inside a group or a character class)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 1
        elif char == "[":
            i = _class_end(pattern, i)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and not depth:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*parts, pattern[start:]]


def _class_end(pattern: str, i: int) -> int:
    """The index of the ``]`` that closes the character class opened at ``i``."""
    i += 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1  # a `]` first is one of the characters
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i


def _literals(pattern: str) -> tuple[tuple[str, ...], bool]:
    """The texts that begin every match of ``pattern``: its literal characters (punctuation
    may be escaped) and small character classes (``[sS]``, ``['"]``), up to the first
    anything else or quantified character; and whether that is the whole pattern (the
    texts are then exactly what it matches). ("",) when it starts with anything else."""
    texts = [""]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and not (pattern[i + 1].isascii() and pattern[i + 1].isalnum()):
            options, end = pattern[i + 1], i + 2
        elif char == "[":
            end = _class_end(pattern, i) + 1
            options = _class_characters(pattern[i + 1 : end - 1]) if end <= len(pattern) else None
            if not options:
                return tuple(texts), False
        elif char not in _SPECIAL:
            options, end = char, i + 1
        else:
            return tuple(texts), False
        if pattern[end : end + 1] in _QUANTIFIERS:
            return tuple(texts), False  # a quantified character may be absent or repeated
        if len(texts) * len(options) > _MAX_LITERALS:
            return tuple(texts), False
        texts = [text + option for text in texts for option in options]
        i = end
    return tuple(texts), True


def _class_characters(inside: str) -> str | None:
    """The characters of a character class written as a plain list of them (``sS``,
    ``'\\"``); None for a range, a negation, an escape of a class like ``\\w``, or a set."""
    out = []
    i = 0
    while i < len(inside):
        char = inside[i]
        if char == "\\" and i + 1 < len(inside) and not (inside[i + 1].isascii() and inside[i + 1].isalnum()):
            out.append(inside[i + 1])
            i += 2
        elif char in "\\^-[]":
            return None
        else:
            out.append(char)
            i += 1
    return "".join(out) or None


_compiled = cache(re.compile)
