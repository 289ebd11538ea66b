"""A fast walk over a module for the two analyses of the XLA4xx family (scaler_analysis.py,
dtype_choices.py): every node with its nearest ancestors, and what a name there refers to."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cache

import libcst as cst

from migrate_xla.rule.api import NODE_TYPES

_LAYOUT_FIELDS = (
    "whitespace",
    "lpar",
    "rpar",
    "comma",
    "semicolon",
    "leading_lines",
    "lines_after",
    "header",
    "footer",
    "newline",
    "trailing_whitespace",
    "equal",
    "colon",
    "dot",
)


@cache
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(node_type) if not f.name.startswith(_LAYOUT_FIELDS))


def walk(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, tuple]]:
    """Every node under ``root`` but layout (whitespace, commas, parentheses) in code order,
    with its three nearest ancestors, nearest first. Reading dataclass fields is about ten
    times faster than ``CSTNode.children``. Import statements are not entered."""
    stack: list[tuple[cst.CSTNode, tuple]] = [(root, ())]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.Import or node_type is cst.ImportFrom:
            continue
        children: list[cst.CSTNode] = []
        for name in _child_fields(node_type):
            value = getattr(node, name)
            value_type = type(value)
            if value_type in NODE_TYPES:
                children.append(value)
            elif value_type is tuple or value_type is list:
                children.extend(v for v in value if type(v) in NODE_TYPES)
        inner = (node, *ancestors[:2])
        stack.extend((child, inner) for child in reversed(children))


def is_reference(name: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Whether ``name`` refers to a variable (not an attribute, keyword, parameter or definition)."""
    if isinstance(parent, cst.Attribute):
        return parent.attr is not name
    if isinstance(parent, cst.Arg):
        return parent.keyword is not name
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        return parent.name is not name
    return True


def use_context(ref: cst.CSTNode, ancestors: tuple) -> cst.CSTNode:
    """What to quote for a use of a scaler: the call it is passed to, the comparison it is in."""
    for node in ancestors:
        if not isinstance(
            node, (cst.Arg, cst.AssignTarget, cst.Element, cst.Tuple, cst.ComparisonTarget, cst.Attribute)
        ):
            return node
    return ref
