"""Where the findings are: one plain code generation that notes where their nodes start
(docs/design.md, step 8 of the pipeline); and the migrated module's code, generated anew
only for the top-level statements the rules changed (step 9)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import libcst as cst

from migrate_xla.rule.api import FileContext
from migrate_xla.rule.findings import Diagnostic
from migrate_xla.rule.tree import STATEMENTS, TRIVIA, FastCodegen, children, codegen, generating


@dataclass
class _PositionRecorder(FastCodegen):
    """Code generation that notes where the wanted nodes start, and nothing else.

    LibCST's PositionProvider records every node of the file, at 4 to 8 times the cost
    of generating the code; findings need a few (benchmarks/README.md), and the code
    after the last of them is not generated at all.
    """

    wanted: set[int] = field(default_factory=set)
    left: int = 0  # wanted nodes whose code is still to come
    found: dict[int, tuple[int, int]] = field(default_factory=dict)
    counted: int = 0  # tokens already counted into line and column
    line: int = 1
    column: int = 0
    spans: dict[int, tuple[tuple[str, ...], int, int]] = field(default_factory=dict)
    # the statements to generate through the recorder (the wanted ones and those around the
    # wanted nodes when they were reported; None: every one), and the plain code generation,
    # into the same tokens, for the others
    keep: set[int] | None = None
    plain: _SpanCodegen | None = None

    def statements(self, body) -> None:
        """Generates a block's statements, noting where each one's code lies."""
        tokens, spans, keep, plain = self.tokens, self.spans, self.keep, self.plain
        for statement in body:
            indent, start = tuple(self.indent_tokens), len(tokens)
            statement._codegen(self if keep is None or id(statement) in keep else plain)
            spans[id(statement)] = (indent, start, len(tokens))

    def here(self) -> tuple[int, int]:
        if self.counted < len(self.tokens):
            chunk = "".join(self.tokens[self.counted :])
            self.counted = len(self.tokens)
            parts = _NEWLINE.split(chunk)
            if len(parts) == 1:
                self.column += len(chunk)
            else:
                self.line += len(parts) - 1
                self.column = len(parts[-1])
        return self.line, self.column

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:  # nodes without a syntactic position of their own
            self.found[id(node)] = self.here()

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self.left -= 1
            if not self.left:
                raise _AllFound  # the code after the last wanted node moves none

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) not in self.wanted:
            return _NOTHING  # most nodes: FastCodegen's no-op
        return self._record(node, start_node)

    @contextmanager
    def _record(self, node, start_node):
        if start_node is None:
            self.found[id(node)] = self.here()
        yield
        if start_node is not None:
            self.found[id(node)] = self.found.get(id(start_node))


class _AllFound(Exception):
    pass


_NOTHING = nullcontext()


_NEWLINE = re.compile(r"\r\n?|\n")


class OriginalCode:
    """The code the positions' recorder generated of the parsed ``module``, with where each
    statement's code lies in it, so that the migrated module's code (``migrated``) is
    generated anew only for what the rules changed: a statement the traversal handed back as
    it was (the same node), in a block of the same indentation, has the same code, since
    code generation depends on nothing else than the node, the indentation and the module's
    indent and newline. The recorder stops after the last finding: a statement after it is
    generated again, as a changed one is.
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.tokens: list[str] = []
        # id(statement) -> (the indentation it was generated at, its first and end token)
        self.spans: dict[int, tuple[tuple[str, ...], int, int]] = {}

    def record(self, recorder: _PositionRecorder) -> None:
        """``module._codegen(recorder)`` (but for the module's last newline, which moves no
        position), noting where each statement's code lies; it stops when the recorder has
        found every node it wants."""
        module = self.module
        self.tokens = recorder.tokens
        self.spans.clear()
        recorder.spans = self.spans
        recorder.plain = _SpanCodegen(
            default_indent=recorder.default_indent,
            default_newline=recorder.default_newline,
            indent_tokens=recorder.indent_tokens,
            tokens=recorder.tokens,
            spans=self.spans,
        )
        with generating(), _blocks():
            try:
                recorder.before_codegen(module)
                for line in module.header:
                    line._codegen(recorder)
                recorder.statements(module.body)
                for line in module.footer:
                    line._codegen(recorder)
                recorder.after_codegen(module)
            except _AllFound:
                pass

    def migrated(self, new: cst.Module) -> str:
        """``new``'s code (``codegen(new)``), for a module the rules made of ``module``."""
        old = self.module
        if (
            not new.has_trailing_newline  # the last newline, which code generation drops, may be in a reused piece
            or new.default_indent != old.default_indent
            or new.default_newline != old.default_newline
        ):
            return codegen(new)
        state = _ReusingCodegen(
            default_indent=new.default_indent, default_newline=new.default_newline, spans=self.spans, old=self.tokens
        )
        with generating(), _blocks():
            for line in new.header:
                line._codegen(state)
            state.statements(new.body)
            for line in new.footer:
                line._codegen(state)
        if not state.tokens:
            state.add_token(state.default_newline)  # as Module._codegen_impl: an empty module keeps its newline
        return "".join(state.tokens)


@dataclass
class _SpanCodegen(FastCodegen):
    """Plain code generation that notes where each statement's code lies."""

    spans: dict[int, tuple[tuple[str, ...], int, int]] = field(default_factory=dict)

    def statements(self, body: Sequence[cst.BaseStatement]) -> None:
        tokens, spans = self.tokens, self.spans
        for statement in body:
            indent, start = tuple(self.indent_tokens), len(tokens)
            statement._codegen(self)
            spans[id(statement)] = (indent, start, len(tokens))


@dataclass
class _ReusingCodegen(FastCodegen):
    """Code generation that takes a statement's code from the parsed module's where it is
    the same node at the same indentation."""

    spans: dict[int, tuple[tuple[str, ...], int, int]] = field(default_factory=dict)
    old: list[str] = field(default_factory=list)

    def statements(self, body: Sequence[cst.BaseStatement]) -> None:
        spans, tokens = self.spans, self.tokens
        for statement in body:
            span = spans.get(id(statement))
            if span is not None and span[0] == tuple(self.indent_tokens):
                tokens.append("".join(self.old[span[1] : span[2]]))
            else:
                statement._codegen(self)


def _block_codegen(self: cst.IndentedBlock, state) -> None:
    """LibCST's ``IndentedBlock._codegen_impl``, the body's statements generated by the
    state's ``statements`` (the recorder's notes where they lie, the migrated module's reuses them)."""
    self.header._codegen(state)
    indent = self.indent
    state.increase_indent(state.default_indent if indent is None else indent)
    if self.body:
        with state.record_syntactic_position(self, start_node=self.body[0], end_node=self.body[-1]):
            state.statements(self.body)
    else:
        # Empty indented blocks are not syntactically valid in Python unless
        # they contain a 'pass' statement, so add one here.
        state.add_indent_tokens()
        with state.record_syntactic_position(self):
            state.add_token("pass")
        state.add_token(state.default_newline)
    for line in self.footer:
        line._codegen(state)
    state.decrease_indent()


_LIBCST_BLOCK = cst.IndentedBlock._codegen_impl


@contextmanager
def _blocks():
    """Within it, an indented block's statements are generated by the state's ``statements``."""
    cst.IndentedBlock._codegen_impl = _block_codegen
    try:
        yield
    finally:
        cst.IndentedBlock._codegen_impl = _LIBCST_BLOCK


def _statements_around(module: cst.Module, ids: set[int]) -> set[int]:
    """The ids of the statements that hold the nodes of ``ids``, found in one walk that stops at
    the last of them."""
    found: set[int] = set()
    left = set(ids)
    stack: list[tuple[cst.CSTNode, tuple[int, ...]]] = [(module, ())]
    while stack and left:
        node, path = stack.pop()
        if id(node) in left:
            left.discard(id(node))
            found.update(path)
        if type(node) in STATEMENTS:
            path = (*path, id(node))
        stack.extend([(child, path) for child in reversed(children(node)) if type(child) not in TRIVIA])
    return found


def positioned(
    module: cst.Module, ctx: FileContext, line_of: Callable[[int], int] | None, code: OriginalCode | None = None
) -> list[Diagnostic]:
    """The findings with their positions; ``line_of`` maps a slice's lines to the file's.
    ``code``: the module's ``OriginalCode``, which keeps what the recorder generated."""
    if not ctx.pending:
        return []
    wanted = set()
    for item in ctx.pending:
        for node in (item.node, item.statement):
            if node is not None:
                wanted.add(id(node))
                if isinstance(node, cst.SimpleStatementLine) and node.body:
                    wanted.add(id(node.body[0]))  # a line's position is its first statement's
    if code is None or code.module is not module:
        code = OriginalCode(module)
    # The statements no wanted node was reported in are generated plainly; a node reported from
    # outside any statement (a rule's leave_Module replaces a call) is looked for in the tree, and
    # one reported from outside its own statements (a rule's hook on a block flags a statement in
    # it) may be in a statement generated plainly: then the recorder goes through every one again.
    around = wanted | {id(statement) for item in ctx.pending for statement in item.around}
    outside = {id(item.node) for item in ctx.pending if not item.around and type(item.node) is not cst.Module}
    if outside:
        around |= _statements_around(module, outside)
    for keep in (around, None):
        recorder = _PositionRecorder(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            wanted=wanted,
            left=len(wanted),
            keep=keep,
        )
        code.record(recorder)
        if not recorder.left:
            break
    diagnostics = []
    for item in ctx.pending:
        where = recorder.found.get(id(item.node)) or recorder.found.get(id(item.statement))
        line, column = (where[0], where[1] + 1) if where else (1, 1)
        if line_of is not None:
            line = line_of(line)
        diagnostics.append(
            Diagnostic(
                code=item.rule.CODE,
                message=item.message,
                line=line,
                column=column,
                severity="info" if item.fixed else item.rule.SEVERITY,
                fixed=item.fixed,
                fix=item.rule.FIX,
                suppressed=item.suppressed,
            )
        )
    return sorted(set(diagnostics), key=lambda d: (d.line, d.column, d.code, d.message))
