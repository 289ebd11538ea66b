"""Generates ``rule_index.py``, what the pre-filter (prefilter.py) reads of each rule and
the module that defines it (what registry.rules_of imports), from the rules themselves:

    .venv/bin/python -m migrate_xla.generators.make_index     (or: make docs)

tests/test_prefilter.py fails when the index is stale.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from migrate_xla.engine import registry
from migrate_xla.engine.prefilter import entry, tests_of
from migrate_xla.generators.write import GENERATED, write_generated

INDEX = GENERATED / "rule_index.py"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.make_index  (or: make docs)"


def index_text(rules: Sequence) -> str:
    """The text of ``rule_index.py`` for these rule classes."""
    rows = "".join(f"    {tuple(entry(rule))!r},\n" for rule in rules)
    patterns = sorted({pattern for rule in rules for pattern in (*rule.TRIGGERS, *rule.REQUIRES)})
    tests = "".join(f"    {pattern!r}: {_written(tests_of(pattern))!r},\n" for pattern in patterns)
    return (
        '"""What the pre-filter reads of each rule, and the module that defines it (registry.rules_of\n'
        "imports only those of the rules a file wakes): (CODE, TARGETS, TRIGGERS, REQUIRES, RUNTIMES, MODULE).\n\n"
        "Generated from codemods/ by migrate_xla/generators/make_index.py; do not edit. Regenerate it after adding,\n"
        f"moving or renaming a rule or changing its TRIGGERS, REQUIRES, TARGETS or RUNTIMES:\n\n    {REGENERATE}\n"
        '"""\n\n'
        f"RULES = (\n{rows})\n\n"
        "# How the pre-filter tells whether each of their patterns occurs in a text (prefilter._tests),\n"
        "# a words test's names sorted\n"
        f"TESTS = {{\n{tests}}}\n"
    )


def _written(tests: tuple) -> tuple:
    """``tests`` as the index writes them: a words test's frozenset as a sorted tuple."""
    return tuple((kind, tuple(sorted(what)) if kind == "words" else what) for kind, what in tests)


def main() -> int:
    text = index_text(registry.all_rules())
    return write_generated(INDEX, text)


if __name__ == "__main__":
    sys.exit(main())
