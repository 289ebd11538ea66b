"""The rules, one module or package per family; ``migrate_xla.engine.registry`` finds them by walking this package.

A family is a module (``checkpoints.py``) or, past a few hundred lines, a package of
modules of one rule or a few (``amp/``, with what its rules share in ``common.py`` and its
own analyses in modules named after them). Its name is what docs/rules.md, ``explain``
and the fixture folders (``fixtures/<family>/``) call it, and the family module's (or
package's) docstring is its section of docs/rules.md. ``shared/`` is not a family: it
holds what several families share. A rule imports from ``migrate_xla.rule.api`` (the rule
API) and from its own family or ``shared/``, nothing else of the project
(tests/test_architecture.py checks it).
"""
