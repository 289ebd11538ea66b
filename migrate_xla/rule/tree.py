"""Fast reads and rewrites of LibCST trees.

LibCST gets a node's children, and runs a transformer, through the node's
``_visit_and_replace_children``, which builds a new copy of the node every time: a
transformer with no rule at all costs about 1.2 parses, and ``node.children`` rebuilds
the node it is asked about. Here the same fields are read straight off the node, in
the same (code) order, and a transformation rebuilds only the nodes whose children
changed (benchmarks/README.md).

These are LibCST's private APIs (``_visit_and_replace_children``, ``_codegen``,
``CodegenState``, ``_BaseParenthesizedNode``; engine/positions.py's recorder uses
``_codegen`` too): pyproject.toml pins LibCST to the minor release the test suite runs
them against (constraints.txt), so that a new LibCST cannot change them under a user.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from functools import cache

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState

from migrate_xla.generated import node_builders

# -- the fields a node type visits, in code order ---------------------------------------

_REQUIRED = object()  # a field whose node cannot be removed


class _FieldOrder(cst.CSTVisitor):
    """Records the fields ``_visit_and_replace_children`` visits, without descending."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.names:
            self.names.append(attribute)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False


# type -> (fields in code order, fields not seen yet because the probed node had None there)
_ORDER: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _probe(node: cst.CSTNode) -> tuple[str, ...]:
    recorder = _FieldOrder()
    node._visit_and_replace_children(recorder)
    known = _ORDER.get(type(node))
    order = list(recorder.names)
    if known is not None:  # merge what an earlier probe saw (a field visited only when set)
        for i, name in enumerate(known[0]):
            if name not in order:
                order.insert(min(i, len(order)), name)
    unseen = tuple(f.name for f in dataclasses.fields(node) if f.name not in order and getattr(node, f.name) is None)
    if known is not None:
        unseen = tuple(name for name in unseen if name in known[1])
    _ORDER[type(node)] = (tuple(order), unseen)
    return tuple(order)


def fields_in_order(node: cst.CSTNode) -> tuple[str, ...]:
    """The names of the fields of ``node`` that hold child nodes, in code order.

    Found once per node type by letting LibCST's own ``_visit_and_replace_children``
    name them; a field it visits only when set (``FormattedStringExpression.format_spec``)
    is added when a node first has it.
    """
    known = _ORDER.get(type(node))
    if known is None:
        return _probe(node)
    order, unseen = known
    if unseen and any(getattr(node, name) is not None for name in unseen):
        return _probe(node)
    return order


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` (the same nodes in the same order) without rebuilding ``node``."""
    out: list[cst.CSTNode] = []
    for name in fields_in_order(node):
        value = getattr(node, name)
        kind = type(value)  # exact type checks: isinstance on LibCST's ABCs is slow
        if kind in NODE_TYPES:
            out.append(value)
        elif kind is tuple or kind is list:
            out.extend(value)
        elif kind not in _NOT_NODES and isinstance(value, (cst.CSTNode, tuple, list)):
            out.extend(value if isinstance(value, (tuple, list)) else [value])  # a subclass of either
    return out


_NOT_NODES = frozenset({type(None), cst.MaybeSentinel, str})


# -- a copy-on-write transformation -------------------------------------------------------


def subclasses(*bases: type) -> frozenset[type]:
    """``bases`` and every class derived from them (an exact ``type(node) in`` check stands
    for isinstance, without the slow check against LibCST's abstract bases)."""
    found, todo = set(), list(bases)
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return frozenset(found)


def _trivia() -> frozenset[type]:
    """Node types that hold only layout (whitespace, comments, brackets, commas, operators):
    no statement, import or expression can be below them."""
    bases = (
        cst.BaseParenthesizableWhitespace,
        cst.EmptyLine,
        cst.TrailingWhitespace,
        cst.Newline,
        cst.Comment,
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
        cst.Comma,
        cst.Dot,
        cst.Semicolon,
        cst.Colon,
        cst.AssignEqual,
        cst.ImportStar,
        cst.BaseBinaryOp,
        cst.BaseBooleanOp,
        cst.BaseCompOp,
        cst.BaseUnaryOp,
        cst.BaseAugOp,
        cst.Asynchronous,
    )
    return subclasses(*bases)


TRIVIA = _trivia()

# Every statement type, compound or a line of small ones (abstract ones too: no node's type is abstract).
STATEMENTS = subclasses(cst.BaseStatement)


# Node types with nothing below them but layout: a traversal that hooks none of them need
# not enter them (a third of the nodes of a file are names).
LEAVES = frozenset(
    {
        cst.Name,
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.Ellipsis,
        cst.FormattedStringText,
    }
)


# Every node type: ``type(x) in NODE_TYPES`` is isinstance(x, CSTNode) without the slow
# ABC check, for loops over many nodes.
NODE_TYPES = subclasses(cst.CSTNode)

# What a removed node becomes in a field that is not a sequence (LibCST's visit_optional
# and visit_sentinel); _REQUIRED fields refuse it, as LibCST's visit_required does.
_REMOVED_AS: dict[type, dict[str, object]] = {}


def _removed_value(node_type: type, name: str) -> object:
    table = _REMOVED_AS.get(node_type)
    if table is None:
        table = {}
        for f in dataclasses.fields(node_type):
            if f.default is None or f.default is cst.MaybeSentinel.DEFAULT:
                table[f.name] = f.default
            else:
                table[f.name] = _REQUIRED
        _REMOVED_AS[node_type] = table
    return table[name]


# The body sequences LibCST visits with visit_body_sequence: a statement that a rule
# emptied (an empty SimpleStatementLine) is dropped from them.
_BODIES = frozenset({cst.Module, cst.IndentedBlock})


class Transformer:
    """Calls ``on_visit(node)`` before a node's children and ``on_leave(original,
    updated)`` after, as ``CSTNode.visit`` does for a ``CSTTransformer``, over the nodes
    of the tree but those in ``skip`` (and what is below them). ``updated`` is
    ``original`` itself when nothing below it changed.

    ``visits`` and ``leaves``, when given, are the node types whose ``on_visit`` and
    ``on_leave`` do anything: the others' are not called (``on_leave`` is then taken to
    hand back ``updated``), a call saved on most nodes of a file.
    """

    def __init__(
        self,
        on_visit: Callable[[cst.CSTNode], object],
        on_leave: Callable[[cst.CSTNode, cst.CSTNode], object],
        skip: frozenset[type] = TRIVIA,
        visits: frozenset[type] | None = None,
        leaves: frozenset[type] | None = None,
    ) -> None:
        self.on_visit = on_visit
        self.on_leave = on_leave
        self.skip = skip | {type(None), cst.MaybeSentinel}
        self.visits = visits
        self.leaves = leaves

    def transform(self, node: cst.CSTNode):
        node_type = type(node)
        if self.visits is None or node_type in self.visits:
            self.on_visit(node)
        skip = self.skip
        changes = None
        known = _ORDER.get(node_type)
        for name in known[0] if known is not None and not known[1] else fields_in_order(node):
            value = getattr(node, name)
            value_type = type(value)
            if value_type in skip:
                continue
            if value_type is tuple or value_type is list:
                if not value:
                    continue  # most brackets lists: nothing to visit
                new = self._sequence(value, node_type in _BODIES and name == "body")
            else:
                new = self.transform(value)
                if new is value:
                    continue
                if isinstance(new, cst.FlattenSentinel):
                    raise TypeError(
                        f"We got a FlattenSentinel while visiting a {value_type.__name__}. This node's "
                        "parent does not allow for it to be it to be replaced with a sequence."
                    )
                if isinstance(new, cst.RemovalSentinel):
                    new = _removed_value(node_type, name)
                    if new is _REQUIRED:
                        raise TypeError(
                            f"We got a RemovalSentinel while visiting a {value_type.__name__}. This "
                            "node's parent does not allow it to be removed."
                        )
            if new is not value:
                if changes is None:
                    changes = {}
                changes[name] = new
        updated = node if changes is None else node.with_changes(**changes)
        if self.leaves is None or node_type in self.leaves:
            return self.on_leave(node, updated)
        return updated

    def _sequence(self, items, body: bool):
        out = None
        skip = self.skip
        for i, child in enumerate(items):
            new = child if type(child) in skip else self.transform(child)
            if new is child:
                if out is not None:
                    out.append(child)
                continue
            if out is None:
                out = list(items[:i])
            if isinstance(new, cst.RemovalSentinel):
                continue
            for item in new if isinstance(new, cst.FlattenSentinel) else (new,):
                if body and not child._is_removable() and item._is_removable():
                    continue  # LibCST's visit_body_sequence
                out.append(item)
        return items if out is None else tuple(out)


# -- parsing ------------------------------------------------------------------------------

_VALIDATE = cst.CSTNode.__post_init__


def _trusted(node: cst.CSTNode) -> None:
    pass


def parse_module(source: str) -> cst.Module:
    """``cst.parse_module(source)``, without checking every node the parser builds, and
    building each faster.

    Each LibCST node checks its fields as it is made (``CSTNode.__post_init__`` calls
    ``_validate``: a regex on every whitespace, parentheses on every expression). That is
    for nodes built by hand; the parser builds valid ones, and the checks cost a fifth of
    the parse (LibCST's own note there says they could be skipped for parsed trees). The
    tree is the same; the nodes rules build are still checked.

    The parser (LibCST's native one) makes each node by calling the class of that name in
    the ``libcst`` module with the fields as keywords; a frozen dataclass's ``__init__``
    sets each field through ``object.__setattr__`` and then calls ``__post_init__``: the
    better part of the parse. While it parses, each such name stands for a function that
    makes the same node (``_builder``: the same class, the same fields and defaults) with
    the slots' own setters: a tenth of the parse less. Each is taken when the parser first
    makes a node of its class (``_maker``: a file makes about 70 of the 170 kinds), from the
    builders written ahead into ``generated/node_builders.py`` (compiled in the run, 76 of them
    cost a pre-commit run of one file 18 ms).
    """
    classes = node_classes()
    for name, cls in classes.items():
        setattr(cst, name, _MADE.get(name) or _maker(name, cls))
    cst.CSTNode.__post_init__ = _trusted
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = _VALIDATE
        for name, cls in classes.items():
            setattr(cst, name, cls)


@cache
def node_classes() -> dict[str, type]:
    """The node classes of the ``libcst`` module, by name (not abstract: the parser makes them).
    Told by their MRO: ``issubclass`` on LibCST's abstract base classes walks every subclass."""
    return {
        name: cls
        for name in dir(cst)
        if isinstance(cls := getattr(cst, name), type) and cst.CSTNode in cls.__mro__ and not inspect.isabstract(cls)
    }


# What makes a node of each class while the parser runs: its ``_builder``, or the class
# itself where it has none; found the first time the parser makes one.
_MADE: dict[str, Callable[..., cst.CSTNode]] = {}


def _maker(name: str, cls: type) -> Callable[..., cst.CSTNode]:
    """Stands for ``cls`` until the parser first makes one: then finds what makes it (``_MADE``)."""

    def first(**fields):
        made = _MADE.get(name)
        if made is None:
            made = _MADE[name] = _builder(cls) or cls
            setattr(cst, name, made)
        return made(**fields)

    return first


def _builder(cls: type) -> Callable[..., cst.CSTNode] | None:
    """``cls(**fields)`` for a slotted frozen dataclass, without its ``__init__``; None for a
    class made otherwise. Written ahead into ``generated/node_builders.py`` (compiling each when
    first needed cost a one-file run 18 ms), and compiled here only where LibCST's class is no
    longer what that was written from."""
    made = builder_code(cls)
    if made is None:
        return None
    code, scope = made
    written = node_builders.BUILDERS.get(cls.__name__)
    if written is not None and written[0] == code:
        return written[1](**scope)
    exec(code, scope)
    return scope["build"]


def builder_code(cls: type) -> tuple[str, dict[str, object]] | None:
    """The code of ``build``, which makes a ``cls`` from its fields as keywords through its
    slots' setters, and the names it reads; None for a class made otherwise (its own
    ``__new__``, ``__init__`` or ``__post_init__``: read off the MRO, since
    ``CSTNode.__post_init__`` is ``_trusted`` while the parser runs)."""
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    init = cls.__init__.__code__
    if (
        cls.__new__ is not object.__new__
        or next(klass for klass in cls.__mro__ if "__post_init__" in klass.__dict__) is not cst.CSTNode
        or init.co_filename != "<string>"  # not made by dataclasses
        or init.co_varnames[: len(names) + 1] != ("self", *names)
        or not all(f.init for f in fields)
    ):
        return None
    scope: dict[str, object] = {"_new": object.__new__, "_cls": cls, "_MISSING": dataclasses.MISSING}
    parameters, body = [], []
    for number, f in enumerate(fields):
        slot = next((klass.__dict__[f.name] for klass in cls.__mro__ if f.name in klass.__dict__), None)
        if type(slot) is not _SLOT:
            return None
        scope[f"_set{number}"] = slot.__set__
        if f.default is not dataclasses.MISSING:
            scope[f"_default{number}"] = f.default
            parameters.append(f"{f.name}=_default{number}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory{number}"] = f.default_factory
            parameters.append(f"{f.name}=_MISSING")
            body.append(f"if {f.name} is _MISSING: {f.name} = _factory{number}()")
        else:
            parameters.append(f.name)
        body.append(f"_set{number}(node, {f.name})")
    code = "".join(
        [
            f"def build({'*, ' if parameters else ''}{', '.join(parameters)}):\n",
            "    node = _new(_cls)\n",
            *(f"    {line}\n" for line in body),
            "    return node\n",
        ]
    )
    return code, scope


_SLOT = type(cst.Name.__dict__["value"])  # a slot's member descriptor


# -- code generation ------------------------------------------------------------------


class FastCodegen(CodegenState):
    """LibCST's code generation without its cost per node: ``record_syntactic_position``
    is a ``contextlib.contextmanager`` that does nothing unless positions are wanted,
    and making one for every node took about a third of the time of ``Module.code``."""

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _NOTHING


_NOTHING = nullcontext()


class _Parenthesized:
    """What LibCST's ``_parenthesize`` does around every expression (its brackets, and its
    syntactic position), as a plain context manager: LibCST's is a generator one, a fifth
    of the time of code generation."""

    __slots__ = ("node", "state", "position")

    def __init__(self, node: cst.CSTNode, state: CodegenState) -> None:
        self.node = node
        self.state = state

    def __enter__(self) -> None:
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.position = self.state.record_syntactic_position(self.node)
        self.position.__enter__()

    def __exit__(self, kind, value, traceback) -> None:
        self.position.__exit__(kind, value, traceback)
        if kind is None:
            for rpar in self.node.rpar:
                rpar._codegen(self.state)


def _parenthesize(node: cst.CSTNode, state: CodegenState) -> _Parenthesized:
    return _Parenthesized(node, state)


_LIBCST_PARENTHESIZE = _BaseParenthesizedNode._parenthesize


def generate(node: cst.CSTNode, state: CodegenState) -> None:
    """``node._codegen(state)``, with ``_Parenthesized`` for LibCST's ``_parenthesize``."""
    with generating():
        node._codegen(state)


@contextmanager
def generating():
    """Within it, ``node._codegen(state)`` uses ``_Parenthesized`` for LibCST's ``_parenthesize``."""
    _BaseParenthesizedNode._parenthesize = _parenthesize
    try:
        yield
    finally:
        _BaseParenthesizedNode._parenthesize = _LIBCST_PARENTHESIZE


def codegen(node: cst.CSTNode) -> str:
    """``node``'s code, as ``Module.code`` (a module's own indent and newline) or
    ``Module([]).code_for_node`` (the defaults) give it, generated faster."""
    module = node if type(node) is cst.Module else cst.Module(body=[])
    state = FastCodegen(default_indent=module.default_indent, default_newline=module.default_newline)
    generate(node, state)
    return "".join(state.tokens)


# -- the lines above a removed statement --------------------------------------------------


def lines_left_by(leading_lines) -> list[cst.EmptyLine]:
    """What stays of the lines above a statement a fix removes (its LibCST ``leading_lines``).

    The comment lines directly above it, with no blank line between them and it, are
    about it and go with it, as its trailing comment does; a blank line, and what is
    above one (a section's comment, the end of the code before), stay.
    """
    end = len(leading_lines)
    while end and leading_lines[end - 1].comment is not None:
        end -= 1
    return list(leading_lines[:end])


def name_uses(module: cst.Module) -> Counter:
    """How often each name is used as a name (not as ``.attribute``) outside imports."""
    uses: Counter = Counter()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            uses[node.value] += 1
        elif kind is cst.Attribute:
            stack.append(node.value)  # its attr is a name, not a use of one
        elif kind is not cst.Import and kind is not cst.ImportFrom:
            stack.extend([child for child in children(node) if type(child) not in TRIVIA])  # no name in layout
    return uses
