"""The rule API: what a rule (``codemods/``) is given, and the vocabulary every layer shares.

- ``api.py``: the base class ``Rule``, ``FileContext`` and the helpers rules share; its public
  names are all a rule imports from migrate_xla;
- ``findings.py``: diagnostics, severities, targets, runtimes and the codes the application
  knows by name;
- ``settings.py``: the ``Settings`` one run carries from the command line to every rule;
- ``runtimes.py``: the two runtimes' import names (PyTorch/XLA and TorchTPU);
- ``tree.py``, ``removed_lines.py``: LibCST helpers and the placeholders of removed lines;
- ``yaml_lines.py``: the line editor of the YAML config rules.

It imports only ``generated/`` and ``sources/`` (path patterns), never the engine, the
application, verify or the generators; this ``__init__`` imports nothing, so the command line
may read findings and settings without LibCST.
"""
