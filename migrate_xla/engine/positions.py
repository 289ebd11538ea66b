"""Where the findings are: one plain code generation that notes where their nodes start
(docs/design.md, step 8 of the pipeline)."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from migrate_xla.findings import Diagnostic
from migrate_xla.rule import FileContext
from migrate_xla.tree import FastCodegen, generate


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
            return super().record_syntactic_position(node)  # most nodes: FastCodegen's no-op
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


_NEWLINE = re.compile(r"\r\n?|\n")


def positioned(module: cst.Module, ctx: FileContext, line_of: Callable[[int], int] | None) -> list[Diagnostic]:
    """The findings with their positions; ``line_of`` maps a slice's lines to the file's."""
    if not ctx.pending:
        return []
    wanted = set()
    for item in ctx.pending:
        for node in (item.node, item.statement):
            if node is not None:
                wanted.add(id(node))
                if isinstance(node, cst.SimpleStatementLine) and node.body:
                    wanted.add(id(node.body[0]))  # a line's position is its first statement's
    recorder = _PositionRecorder(
        default_indent=module.default_indent, default_newline=module.default_newline, wanted=wanted, left=len(wanted)
    )
    try:
        generate(module, recorder)
    except _AllFound:
        pass
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
