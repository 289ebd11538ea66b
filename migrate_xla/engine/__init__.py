"""One file through the rules, from its text to the migrated text and the findings
(docs/design.md, "The pipeline for one file"), and the registry that finds the rules.

- ``registry.py``: the rules in ``codemods/``, found by discovery and imported by code
  through the generated index (``rules_of``);
- ``prefilter.py``: which rules a file can wake, from its text alone (no parse);
- ``slicing.py``: the top-level statements a file's woken rules need, when not all;
- ``pipeline.py``: slice, parse, the rules, imports, positions, code generation and the
  check that the result compiles (``migrate_woken``, which ``app.run.migrate_code`` calls);
- ``runner.py``: ``RuleRunner``, every woken rule in code order in one traversal, with
  what the engine does between them (import aliases, TODO comments, removed lines,
  ``branches.py``' collapsed branches);
- ``imports.py``: the imports the rules scheduled, added and removed once at the end;
- ``positions.py``: where the findings' nodes start, from one plain code generation;
- ``suppression.py``: ``noqa`` comments honoured;
- ``configs.py``: YAML config files handed to the rules that convert them.

It imports the rule API (``migrate_xla.rule``), ``generated/`` and the rules through the
registry; never the application (``app/``), verify or the generators. app/run.py imports
``pipeline`` (and with it LibCST and the rules) the first time a file wakes a rule.
"""
