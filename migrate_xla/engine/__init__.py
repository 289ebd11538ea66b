"""The LibCST part of a run: one file that wakes a rule, from its text to the migrated
text and the findings (docs/design.md, "The pipeline for one file").

- ``pipeline.py``: slice, parse, the rules, imports, positions, code generation and the
  check that the result compiles (``migrate_woken``, which ``run.migrate_code`` calls);
- ``runner.py``: ``RuleRunner``, every woken rule in code order in one traversal, with
  what the engine does between them (import aliases, TODO comments, removed lines,
  collapsed branches);
- ``positions.py``: where the findings' nodes start, from one plain code generation.

migrate_xla/run.py imports ``pipeline`` (and with it LibCST and the rules) the first time
a file wakes a rule; nothing here imports run.py.
"""
