"""Statement shapes several families test for: an import line, a line that is one call, a docstring; a carried
name, a dotted name, the names a node writes and those its assignments bind; the lines of a ``with``'s block
once the ``with`` goes; the environment variable a read names."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from migrate_xla.rule.api import code_nodes, string_value, subtree


def environment_variable(qualname: Callable[[cst.CSTNode], str | None], node: cst.CSTNode) -> str | None:
    """``RANK`` for ``os.environ["RANK"]``, ``os.environ.get("RANK", 0)``, ``os.getenv("RANK")``
    (``qualname``: the rule's, which knows the file's imports); None for anything else."""
    if isinstance(node, cst.Subscript) and qualname(node.value) == "os.environ" and len(node.slice) == 1:
        index = node.slice[0].slice
        return string_value(index.value) if isinstance(index, cst.Index) else None
    if isinstance(node, cst.Call) and qualname(node.func) in ("os.environ.get", "os.getenv") and node.args:
        return string_value(node.args[0].value)
    return None


def is_import_line(statement: cst.BaseStatement) -> bool:
    """A line of imports only (``import os, sys``; ``import os; import sys``): where code
    inserted after the imports goes. Not cuda_only's ``holds_import``, a line with any import."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def call_of(statement: cst.BaseStatement) -> cst.Call | None:
    """The call of a statement line that is nothing but a call, like ``optimizer.step()``."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return small.value
    return None


def unwrap_block(statement: cst.With) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """The statements of a ``with``'s block as lines of the block around it, and the lines that
    go above the first of them when the ``with`` goes: its own and its header's comment
    (devices' XLA112, amp's XLA408)."""
    body = statement.body
    if isinstance(body, cst.SimpleStatementSuite):
        statements: list[cst.BaseStatement] = [cst.SimpleStatementLine(body=body.body)]
    else:
        statements = list(body.body)
    above = list(statement.leading_lines)
    if isinstance(body, cst.IndentedBlock) and body.header.comment is not None:  # with ...:  # comment
        above.append(cst.EmptyLine(comment=body.header.comment))
    return statements, above


def is_docstring(statement: cst.BaseStatement) -> bool:
    """A line that is nothing but a string: a module's, class's or function's docstring."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def carried_name(node: cst.CSTNode) -> str | None:
    """``x`` or ``self.x``: a name a value can be kept in across statements; None otherwise."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def dotted(node: cst.CSTNode) -> str | None:
    """``self.cfg.training`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    return ".".join([node.value, *reversed(parts)])


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name written in ``node``, attributes' too (``x``, ``device`` and ``to`` in ``x.to(device)``)."""
    return {n.value for n in code_nodes(node) if isinstance(n, cst.Name)}


def assigned_names(node: cst.CSTNode) -> Iterator[str]:
    """The names the assignments in ``node`` bind (``=``, annotated, augmented, a ``for``
    target): a name that is the target, or one inside a tuple or list target; not the base of
    an attribute or a subscript (``self.x = ...`` binds no name)."""
    for assignment in subtree(node):
        if isinstance(assignment, cst.Assign):
            targets = [t.target for t in assignment.targets]
        elif isinstance(assignment, (cst.AnnAssign, cst.AugAssign, cst.For)):
            targets = [assignment.target]
        else:
            continue
        for target in targets:
            for name in subtree(target):
                if isinstance(name, cst.Name) and (name is target or isinstance(target, (cst.Tuple, cst.List))):
                    yield name.value
