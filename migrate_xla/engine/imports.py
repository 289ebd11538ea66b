"""Applies the imports the rules scheduled, once per file, at the module's top level.

LibCST's AddImportsVisitor and RemoveImportsVisitor did this job first; they cost
about 0.4 s a file (matcher dispatch on every node, full scope analysis) against
0.02 s for parsing, so this module does the two simple things the rules need:
- add ``import m``, ``import m as a`` or ``from m import n [as a]`` after the module's
  leading imports (IPython commands among them, such as a notebook's ``!pip install``,
  are passed over), unless an import already binds the name; when the first torch
  import comes after other statements (a script that sets ``XLA_FLAGS`` before it
  imports torch), after the imports that follow it, since torch_xla reads its settings
  when it is imported;
- remove a top-level import whose name the migrated code no longer uses: no ``Name``
  node of the migrated tree outside import statements (attributes ``x.name`` aside,
  f-string expressions included) refers to it. The comment lines directly above a
  removed import go with it (as with every removed statement: tree.lines_left_by); a
  comment with a blank line under it moves down to the next statement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from itertools import takewhile

import libcst as cst

from migrate_xla.rule.api import Import, dotted_name
from migrate_xla.rule.tree import lines_left_by, name_uses


def apply_imports(
    module: cst.Module, add: Iterable[Import], remove: Iterable[Import], elsewhere: Callable[[], Counter] = Counter
) -> cst.Module:
    """``elsewhere``: the name uses of code that is not in ``module`` (a slice's skipped units)."""
    remove = list(remove)
    if remove:
        module = _remove_unused(module, remove, elsewhere())
    add = [spec for spec in add if not _already_imported(module, spec)]
    if add:
        module = _add(module, sorted(add, key=lambda s: (s.obj is not None, s.module, s.obj or "", s.asname or "")))
    return module


def _statement(spec: Import) -> cst.SimpleStatementLine:
    if spec.obj is None:
        code = f"import {spec.module}" + (f" as {spec.asname}" if spec.asname else "")
    else:
        code = f"from {spec.module} import {spec.obj}" + (f" as {spec.asname}" if spec.asname else "")
    return cst.parse_statement(code)


def _imports_of(statement: cst.CSTNode) -> list[Import]:
    """What a top-level statement imports, as Import specs (empty for other statements)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    found = []
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                asname = alias.asname.name.value if alias.asname is not None else None
                found.append(Import(dotted_name(alias.name), asname=asname))
        elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
            if isinstance(small.names, cst.ImportStar):
                continue
            for alias in small.names:
                asname = alias.asname.name.value if alias.asname is not None else None
                found.append(Import(dotted_name(small.module), dotted_name(alias.name), asname))
    return found


def _already_imported(module: cst.Module, spec: Import) -> bool:
    for statement in module.body:
        for have in _imports_of(statement):
            if have == spec:
                return True
            # `import torch_xla.core.xla_model` also binds `torch_xla`
            if spec.obj is None and spec.asname is None and have.obj is None and have.asname is None:
                if have.module.split(".")[0] == spec.module:
                    return True
    return False


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_ipython(statement: cst.CSTNode) -> bool:
    """``get_ipython().system('pip install ...')``: what a notebook's ``!pip install`` runs.

    Imports go below the imports that follow such commands, so that a package a first
    cell installs is there when it is imported.
    """
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    value = getattr(statement.body[0], "value", None)
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Call)
        and isinstance(value.func.value.func, cst.Name)
        and value.func.value.func.value == "get_ipython"
    )


def _add(module: cst.Module, specs: list[Import]) -> cst.Module:
    body = list(module.body)
    position = _after_imports(body, 0)
    first_torch = next((i for i, s in enumerate(body) if _imports_torch(s)), None)
    if first_torch is not None and first_torch >= position:
        position = _after_imports(body, first_torch)
    new = [_statement(spec) for spec in specs]
    if position == 1 and _is_docstring(body[0]):  # the first import of a module under its docstring
        new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:position], *new, *body[position:]])


def _after_imports(body: list[cst.CSTNode], start: int) -> int:
    """The index after the run of imports that starts at ``start`` (at 0: after a docstring)."""
    position = start
    for index, statement in enumerate(body[start:], start):
        if _imports_of(statement) or (index == 0 and _is_docstring(statement)):
            position = index + 1
        elif isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
        ):
            position = index + 1  # relative or star imports
        elif _is_ipython(statement):
            continue  # a notebook's `!pip install` before its imports
        else:
            break
    return position


def _imports_torch(statement: cst.CSTNode) -> bool:
    """``import torch``, ``from torch_xla import ...``, ``import torchvision``: when other
    statements come before the first of these, the added imports go after it (and the
    imports that follow it). A script that runs code before it imports torch sets up what
    torch and torch_xla read as they are imported (``os.environ["XLA_FLAGS"] = ...``,
    ``os.environ.setdefault("PJRT_DEVICE", ...)``, ``os.putenv``, ``sys.path``): torch_xla
    imported above that code would never see it. Told apart by where the statements are,
    not by what they do, so that a slice (whose skipped statements are placeholders) puts
    the imports where the whole file does."""
    return any(spec.module.split(".")[0].startswith("torch") for spec in _imports_of(statement))


def _remove_unused(module: cst.Module, specs: list[Import], elsewhere: Counter) -> cst.Module:
    uses = name_uses(module) + elsewhere
    body = []
    # the comments above a removed import go to the next line, and the gap above it too where that
    # line has none of its own (the blank line under a docstring stays)
    carried: list[cst.EmptyLine] = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(have in specs for have in _imports_of(statement)):
            kept = _without_unused(statement, specs, uses)
            if kept is None:
                carried.extend(lines_left_by(statement.leading_lines))
                continue
            statement = kept
        if carried:
            own = statement.leading_lines
            gap = [] if own and own[0].comment is None else list(takewhile(lambda line: line.comment is None, carried))
            comments = [line for line in carried if line.comment is not None]
            statement = statement.with_changes(leading_lines=[*gap, *comments, *own])
            carried = []
        body.append(statement)
    return module.with_changes(body=body)


def _without_unused(statement: cst.SimpleStatementLine, specs: list[Import], uses: Counter):
    small_statements = []
    for small in statement.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            kept = [a for a in small.names if not _unused(a, small, specs, uses)]
            if not kept:
                continue
            if len(kept) != len(small.names):
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                small = small.with_changes(names=kept)
        small_statements.append(small)
    if not small_statements:
        return None
    small_statements[-1] = small_statements[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=small_statements)


def _unused(alias: cst.ImportAlias, small: cst.Import | cst.ImportFrom, specs: list[Import], uses: Counter) -> bool:
    asname = alias.asname.name.value if alias.asname is not None else None
    if isinstance(small, cst.Import):
        spec = Import(dotted_name(alias.name), asname=asname)
        local = asname or spec.module.split(".")[0]
    else:
        spec = Import(dotted_name(small.module), dotted_name(alias.name), asname)
        local = asname or spec.obj
    if spec not in specs:
        return False
    return uses[local] == 0
