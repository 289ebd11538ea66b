"""xla-migrate: GPU PyTorch training code rewritten for PyTorch/XLA or TorchTPU, and proven.

The packages, from the command line down (docs/design.md draws the map; tests/test_architecture.py
holds the boundaries):

- ``app/``: the command line and the service behind it (options, configuration, the project's
  files, a run over them, the report);
- ``engine/``: one file through the rules (pre-filter, slicing, the rules' traversal, imports,
  positions) and the registry that finds the rules in ``codemods/``;
- ``rule/``: the rule API: ``rule.api`` is all a rule imports, with the words of a run's contract
  (findings, settings, runtimes) and the tree helpers it gives them;
- ``sources/``: files found, read and written back without losing anything;
- ``verify/``: the harness that runs the original and the migration and decides a verdict;
- ``generated/``: tables written by ``generators/`` from installed packages and from codemods/;
- ``generators/``: the commands that write them and docs/rules.md, never imported at run time.
"""
