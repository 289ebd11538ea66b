"""Prints the rule documentation, docs/rules.md, generated from the rules themselves.

python -m migrate_xla.generators.docs > docs/rules.md     (or: make docs)
"""

from __future__ import annotations

import sys

from migrate_xla.app.report import rules_page

if __name__ == "__main__":
    sys.stdout.write(rules_page())
