"""Cases from real projects (issue 40): repositories teams train with, laid out as the repository is
(several files and packages, configs, launchers, data read by relative paths), one module a domain.

Each module defines ``REPOS`` (owner/name -> pinned commit, given to corpus.pin before its cases are built), ``CASES``
(built with corpus.case; each is tagged "project" here), and where it needs them ``GENERATORS`` (name -> function(path, **opts)
writing what its scripts read) and ``STUBS`` (package -> {relative path: text}: stand-ins for
packages this machine lacks that do not matter to training). Modules are found by discovery
(those whose names start with "_" are helpers and are skipped);
their generators and stand-ins join prepare.py's. A generator imports what it needs from
prepare.py inside its body (prepare imports this package).
"""

from __future__ import annotations

import importlib
import pkgutil

PROJECT_CASES: list[dict] = []
GENERATORS: dict = {}
STUBS: dict = {}

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):  # a helper of the domain modules (_standins.py), no cases
        continue
    _mod = importlib.import_module(f"{__name__}.{_info.name}")
    for _key, _table in (("GENERATORS", GENERATORS), ("STUBS", STUBS)):
        for _name, _value in getattr(_mod, _key, {}).items():
            if _name in _table:
                raise ValueError(f"projects.{_info.name}: {_key[:-1].lower()} {_name!r} is defined twice")
            _table[_name] = _value
    PROJECT_CASES += _mod.CASES

for _case in PROJECT_CASES:
    if "project" not in _case["tags"]:
        _case["tags"].insert(0, "project")
