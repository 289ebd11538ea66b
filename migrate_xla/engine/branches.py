"""Conditionals whose branches the migration made identical, collapsed to one branch.

A CUDA script often picks among GPUs where XLA has one device per process::

    if args.gpu is not None:                                    if args.gpu is not None:
        device = torch.device("cuda:{}".format(args.gpu))  ->       device = torch_xla.device()
    else:                                                       else:
        device = torch.device("cuda")                               device = torch_xla.device()

and so do ``model.cuda(args.gpu) if args.gpu is not None else model.cuda()``,
``torch.load(path)`` or ``torch.load(path, map_location="cuda:{}".format(args.gpu))``
(both load to ``"cpu"`` after XLA108), and the like. When
the rules' fixes leave an ``if`` / ``else`` (or the last ``elif`` / ``else`` of a chain,
or a conditional expression ``a if cond else b``) with branches that are the same code,
comments and layout included, the engine keeps the one branch, in the place of the
conditional: ``device = torch_xla.device()``.

The same goes for a block the fixes emptied (every statement of it removed, ``pass`` left):
an ``else`` (or last ``elif``) of nothing but that ``pass`` goes, and so does an ``if`` without
``else`` whose block is that ``pass`` and whose test may be dropped (below)::

    if torch.cuda.is_available():                  (nothing: not
        torch.backends.cudnn.benchmark = True  ->   if bool(torch_xla.device_count()): pass)

A block the user wrote as ``pass`` stays, as do an ``if`` whose emptied block has an ``else`` that
does something, and loops and ``with`` statements left with ``pass`` (iterating and entering a
context manager act).

Only where nothing is lost: branches that were already the same before the migration
are the user's and stay; the test is dropped only when evaluating it has no effect (names,
attributes, subscripts, literals, comparisons, operators and conditional expressions on
them, calls of a few functions known to only ask, such as ``torch_xla.device_count()`` or
``len``, and ``str(x).startswith("cuda")``, the test of XLA111's mapping); and the
``if`` is kept when a comment would go with it (in the test, on the ``if`` or ``else``
line, between the branches, at a block's end) or when a rule flagged it (its TODO comment
is about the test). Nothing is reported: the fixes that made the branches one are. The
engine does this after the rules have left the enclosing block, so that a rule that plans
by statement positions in a block (XLA201) sees the block as it was.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from migrate_xla.rule.api import TODO_PREFIX, FileContext, dotted_name
from migrate_xla.rule.tree import codegen

Qualname = Callable[[cst.CSTNode], "str | None"]

# Calls that only ask something: evaluating them has no effect that dropping them would lose.
PURE_CALLS = frozenset(
    {
        "torch_xla.device_count",
        "torch_xla.runtime.world_size",
        "torch_xla.runtime.global_ordinal",
        "torch_xla.runtime.local_ordinal",
        "torch_xla.runtime.process_index",
        "torch_xla.runtime.device_type",
        "torch_xla.core.xla_model.is_master_ordinal",
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.tpu.is_available",  # what XLA105 writes for torch.cuda's under --runtime torch-tpu
        "torch.tpu.device_count",
        "torch.distributed.is_available",
        "torch.distributed.is_initialized",
        "torch.distributed.get_rank",
        "torch.distributed.get_world_size",
        "os.environ.get",
        "os.getenv",
    }
)
PURE_BUILTINS = frozenset({"bool", "int", "float", "str", "len", "isinstance", "hasattr", "getattr"})
# str's methods that only ask, tested on a str (is_pure): str(device).startswith("cuda")
STRING_TESTS = frozenset({"startswith", "endswith"})
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)


# What the rules write names the guide's modules by these aliases (imported after the rules ran)
WRITTEN = {"torch_xla": "torch_xla", "xm": "torch_xla.core.xla_model", "xr": "torch_xla.runtime"}


def qualname_in(ctx: FileContext) -> Qualname:
    """``ctx.qualname``, which also knows the names the rules' fixes wrote (``torch_xla.device_count``
    from XLA105) when the file binds them to nothing else: their imports are added afterwards."""

    def qualname(node: cst.CSTNode) -> str | None:
        name = ctx.qualname(node)
        if name is not None:
            return name
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or head.value not in WRITTEN or head.value in ctx.aliases:
            return None
        try:
            written = dotted_name(node)
        except TypeError:
            return None
        return WRITTEN[head.value] + written[len(head.value) :]

    return qualname


def is_pure(node: cst.CSTNode, qualname: Qualname) -> bool:
    """Whether evaluating the expression ``node`` has no effect but its value (and, for a
    missing name or attribute, its error), by its shape and the calls it makes."""
    if isinstance(node, (cst.Name, *_LITERALS)):
        return True
    if isinstance(node, cst.Attribute):
        return is_pure(node.value, qualname)
    if isinstance(node, cst.Subscript):
        return is_pure(node.value, qualname) and all(
            isinstance(element.slice, cst.Index) and is_pure(element.slice.value, qualname) for element in node.slice
        )
    if isinstance(node, cst.Comparison):
        return is_pure(node.left, qualname) and all(is_pure(c.comparator, qualname) for c in node.comparisons)
    if isinstance(node, (cst.BooleanOperation, cst.BinaryOperation)):
        return is_pure(node.left, qualname) and is_pure(node.right, qualname)
    if isinstance(node, cst.UnaryOperation):
        return is_pure(node.expression, qualname)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and is_pure(e.value, qualname) for e in node.elements)
    if isinstance(node, cst.IfExp):
        return is_pure(node.test, qualname) and is_pure(node.body, qualname) and is_pure(node.orelse, qualname)
    if isinstance(node, cst.Call):
        if _is_string_test(node, qualname):
            return True
        name = qualname(node.func)
        known = name in PURE_CALLS or (  # a builtin, not a name an import binds
            name is None and isinstance(node.func, cst.Name) and node.func.value in PURE_BUILTINS
        )
        return known and all(not arg.star and is_pure(arg.value, qualname) for arg in node.args)
    return False


def _is_string_test(call: cst.Call, qualname: Qualname) -> bool:
    """``str(x).startswith("cuda")`` (the test of XLA111's mapping): a method of ``STRING_TESTS``
    with literal arguments, on a string literal or the builtin ``str()`` of a pure value, which
    is a ``str`` whatever ``x`` is."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in STRING_TESTS):
        return False
    text = func.value
    is_str = isinstance(text, (cst.SimpleString, cst.ConcatenatedString)) or (
        isinstance(text, cst.Call)
        and isinstance(text.func, cst.Name)
        and text.func.value == "str"
        and is_pure(text, qualname)  # the builtin (no import binds it), of a pure value
    )
    return is_str and all(not arg.star and _is_literal(arg.value) for arg in call.args)


def _is_literal(node: cst.CSTNode) -> bool:
    """A literal, or a tuple of them: ``"cuda"``, ``("cuda", "gpu")``."""
    if isinstance(node, cst.Tuple):
        return all(isinstance(e, cst.Element) and _is_literal(e.value) for e in node.elements)
    return isinstance(node, _LITERALS)


def _has_comment(node: cst.CSTNode | None) -> bool:
    """Whether whitespace or a line node holds a comment."""
    if node is None:
        return False
    if isinstance(node, (cst.TrailingWhitespace, cst.EmptyLine)):
        return node.comment is not None
    if isinstance(node, cst.ParenthesizedWhitespace):
        return _has_comment(node.first_line) or any(_has_comment(line) for line in node.empty_lines)
    return False


def _droppable(test: cst.BaseExpression, qualname: Qualname) -> bool:
    """A test that can go: it has no effect, and no comment inside its parentheses."""
    return is_pure(test, qualname) and "#" not in codegen(test)


def _todos(lines) -> int:
    return sum(1 for line in lines if line.comment is not None and line.comment.value.startswith(TODO_PREFIX))


def _same_branches(original: cst.If, updated: cst.If) -> bool:
    """``updated``'s ``if`` and ``else`` blocks are the same code, and were not in ``original``."""
    orelse = updated.orelse
    if not isinstance(orelse, cst.Else) or not updated.body.deep_equals(orelse.body):
        return False
    return not (isinstance(original.orelse, cst.Else) and original.body.deep_equals(original.orelse.body))


def collapsible_if(original: cst.If, updated: cst.If, qualname: Qualname) -> bool:
    """Whether ``updated`` (``original`` after the rules) can be replaced by its one branch."""
    if not _same_branches(original, updated) or not _droppable(updated.test, qualname):
        return False
    orelse = updated.orelse
    body = updated.body
    if any(line.comment is not None for line in orelse.leading_lines):
        return False  # a comment between the branches
    if isinstance(body, cst.IndentedBlock) and (
        body.header.comment is not None or any(line.comment is not None for line in body.footer)
    ):
        return False  # a comment on the `if` / `else` line, or at the end of the blocks
    if isinstance(body, cst.SimpleStatementSuite) and _has_comment(body.trailing_whitespace):
        return False
    return _todos(updated.leading_lines) <= _todos(original.leading_lines)  # no rule flagged the `if`


def _only_pass(block: cst.BaseSuite) -> bool:
    """``block`` is a bare ``pass`` (or nothing): no other statement, no comment."""
    if isinstance(block, cst.SimpleStatementSuite):  # if cond: pass (LibCST writes an empty one so)
        return all(type(s) is cst.Pass for s in block.body) and not _has_comment(block.trailing_whitespace)
    if block.header.comment is not None or any(line.comment is not None for line in block.footer):
        return False
    return all(
        type(s) is cst.SimpleStatementLine
        and all(type(small) is cst.Pass for small in s.body)
        and s.trailing_whitespace.comment is None
        and not any(line.comment is not None for line in s.leading_lines)
        for s in block.body
    )


def emptied(original: cst.BaseSuite, updated: cst.BaseSuite) -> bool:
    """The fixes removed every statement of the block ``original``: ``updated`` is a bare ``pass``."""
    return _only_pass(updated) and not _only_pass(original)


def without_emptied_else(original: cst.If, updated: cst.If) -> cst.If:
    """``updated`` without its ``else`` (or the ``else`` a collapsed last ``elif`` became) when the
    fixes emptied it and no comment goes with it: ``else: pass`` does nothing, whatever the test."""
    orelse = updated.orelse
    if (
        type(orelse) is not cst.Else
        or original.orelse is None
        or not emptied(original.orelse.body, orelse.body)
        or any(line.comment is not None for line in orelse.leading_lines)
    ):
        return updated
    return updated.with_changes(orelse=None)


def emptied_if(original: cst.If, updated: cst.If, qualname: Qualname) -> bool:
    """Whether ``updated`` (``original`` after the rules) is an ``if`` without ``else`` whose block
    the fixes emptied and whose test has no effect: ``if bool(torch_xla.device_count()): pass``
    (it was ``if torch.cuda.is_available(): torch.backends.cudnn.benchmark = True``) goes whole.
    A test that calls what may act (``if setup(): ...``), an ``if`` the user wrote empty, a comment
    on the ``if`` line or in its test, and a rule's TODO above it keep it."""
    return (
        updated.orelse is None
        and emptied(original.body, updated.body)
        and _droppable(updated.test, qualname)
        and _todos(updated.leading_lines) <= _todos(original.leading_lines)
    )


def as_else(elif_: cst.If) -> cst.Else:
    """The last ``elif`` of a chain, collapsed: ``else:`` with its block."""
    return cst.Else(
        body=elif_.body, leading_lines=elif_.leading_lines, whitespace_before_colon=elif_.whitespace_after_test
    )


def branch_statements(statement: cst.If) -> list[cst.BaseStatement]:
    """The statements that stand for the collapsed ``statement``, its comments above the first."""
    body = statement.body
    if isinstance(body, cst.SimpleStatementSuite):  # if cond: x = 1
        return [
            cst.SimpleStatementLine(
                body=body.body, leading_lines=statement.leading_lines, trailing_whitespace=body.trailing_whitespace
            )
        ]
    if not body.body:  # every statement of the block removed (`if dist.is_initialized(): dist.destroy_...()`)
        return []
    first, *rest = body.body
    return [first.with_changes(leading_lines=[*statement.leading_lines, *first.leading_lines]), *rest]


def collapsible_ifexp(original: cst.IfExp, updated: cst.IfExp, qualname: Qualname) -> bool:
    """Whether ``a if cond else a`` (``original`` after the rules) can be replaced by ``a``."""
    return (
        updated.body.deep_equals(updated.orelse)
        and not original.body.deep_equals(original.orelse)
        and _droppable(updated.test, qualname)
        and not any(
            _has_comment(w)
            for w in (
                updated.whitespace_before_if,
                updated.whitespace_after_if,
                updated.whitespace_before_else,
                updated.whitespace_after_else,
            )
        )
    )


def ifexp_branch(updated: cst.IfExp) -> cst.BaseExpression:
    """The one branch of a collapsed conditional expression; in the conditional's parentheses
    when it spans lines (which only parentheses may allow)."""
    body = updated.body
    if not updated.lpar or "\n" not in codegen(body):
        return body
    return body.with_changes(lpar=[*updated.lpar, *body.lpar], rpar=[*body.rpar, *updated.rpar])
