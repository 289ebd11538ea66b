"""A fast walk over a module: every node with its nearest ancestors, and what a name there
refers to. The walk of the whole module is made once a file (``walked``) for the analyses that
read all of it: amp's scaler_analysis.py and dtype_choices.py, devices' cuda_guards.py,
device_values.chooses_cpu."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from functools import cache
from operator import attrgetter

import libcst as cst

from migrate_xla.rule.api import NODE_TYPES, FileContext

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
def _child_values(node_type: type) -> Callable[[cst.CSTNode], tuple]:
    """What reads a node's fields but layout, in one call: ``(field, ...)``."""
    names = tuple(f.name for f in dataclasses.fields(node_type) if not f.name.startswith(_LAYOUT_FIELDS))
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda node: (one(node),)
    return lambda node: ()


def walk(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, tuple]]:
    """Every node under ``root`` but layout (whitespace, commas, parentheses) in code order,
    with its three nearest ancestors, nearest first. Reading dataclass fields is about ten
    times faster than ``CSTNode.children``. Import statements are not entered."""
    stack: list[tuple[cst.CSTNode, tuple]] = [(root, ())]
    node_types = NODE_TYPES
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.Import or node_type is cst.ImportFrom:
            continue
        children: list[cst.CSTNode] = []
        for value in _child_values(node_type)(node):
            value_type = type(value)
            if value_type in node_types:
                children.append(value)
            elif value_type is tuple or value_type is list:
                children.extend([v for v in value if type(v) in node_types])
        if children:
            inner = (node, *ancestors[:2])
            children.reverse()
            stack.extend([(child, inner) for child in children])


def walked(ctx: FileContext, module: cst.Module) -> list[tuple[cst.CSTNode, tuple]]:
    """``walk(module)``, made once a file for every analysis that reads the whole module (each
    walked it again: a tenth of the rules' time on a GPU script)."""
    made = ctx.shared.get(_WALKED)
    if made is None or made[0] is not module:  # a file's whole module after its slice
        made = ctx.shared[_WALKED] = (module, list(walk(module)))
    return made[1]


_WALKED = "walked"  # ctx.shared key: (the module, its walk)


def is_reference(name: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Whether ``name`` refers to a variable (not an attribute, keyword, parameter or definition)."""
    parent_type = type(parent)  # exact type checks: isinstance on LibCST's ABCs is slow
    if parent_type is cst.Attribute:
        return parent.attr is not name
    if parent_type is cst.Arg:
        return parent.keyword is not name
    if parent_type is cst.Param or parent_type is cst.FunctionDef or parent_type is cst.ClassDef:
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
