"""One file through the migration pipeline, once it wakes a rule.

The pipeline (docs/design.md, "The pipeline for one file"): pre-filter with the enabled
rules' triggers (migrate_xla/run.py, without LibCST), parse once (a big file as a slice
without what no woken rule needs, migrate_xla/slicing.py), run every woken rule in code
order in one traversal, apply the scheduled imports once, check that the result
compiles. The run's other names (options, files, the process pool) are in run.py and
are importable from here too.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

import libcst as cst

from migrate_xla import branches, registry
from migrate_xla.imports import apply_imports
from migrate_xla.prefilter import patterns_of
from migrate_xla.removed_lines import drop_removed_lines as _drop_removed_lines
from migrate_xla.removed_lines import removed_line as _removed_line
from migrate_xla.removed_lines import tidy_line as _tidy_line
from migrate_xla.rule import TARGETS, Diagnostic, FileContext, Rule, WholeModuleNeeded  # noqa: F401
from migrate_xla.run import (  # noqa: F401 (the run's names, importable from here as before)
    FileResult,
    MigrationError,
    Options,
    migrate_code,
    migrate_file,
    migrate_files,
    options_for,
    relocate,
)
from migrate_xla.slicing import Slice, slice_text
from migrate_xla.tree import (
    LEAVES,
    TRIVIA,
    FastCodegen,
    Transformer,
    codegen,
    generate,
    parse_module,
    subclasses,
)


class RuleRunner:
    """Runs the visit/leave methods of many rules in one traversal, in rule order.

    It also keeps the import-alias table (imports are seen before the code that uses
    them) and the stack of enclosing statements that TODO comments attach to. The
    traversal is ``tree.Transformer``'s: LibCST's ``CSTTransformer`` rebuilds every node
    of the file, this one only those whose children changed, and it does not enter
    layout (whitespace, brackets, operators) nor leaves (names, literals) that no rule looks at.
    """

    def __init__(self, ctx: FileContext, rules: Sequence[Rule], piece: Slice | None = None) -> None:
        self.ctx = ctx
        self.piece = piece
        self.visitors: dict[str, list[Callable]] = defaultdict(list)
        self.leavers: dict[str, list[Callable]] = defaultdict(list)
        for rule in rules:
            for name in _hooks(type(rule)):
                kind, _, node_type = name.partition("_")
                table = self.visitors if kind == "visit" else self.leavers
                table[node_type].append(getattr(rule, name))
        hooked = {getattr(cst, name, None) for name in (*self.visitors, *self.leavers)}
        self.transformer = Transformer(self.on_visit, self.on_leave, (TRIVIA | LEAVES) - hooked)
        # the blocks of the `if` statements whose branches the fixes made one (branches.py), by
        # id (the block: a rule that moves the `if` elsewhere, XLA659, may give it new leading
        # lines); held, so that no other node takes the id of one while the file is migrated
        self.collapsed: dict[int, cst.BaseSuite] = {}
        self.qualname = branches.qualname_in(ctx)

    def run(self, module: cst.Module) -> cst.Module:
        module = self.transformer.transform(module)
        if self.collapsed:  # a rule moved the `if` out of the block it was left in (XLA659's worker)
            module = Transformer(_visit_nothing, self._flatten_blocks, TRIVIA).transform(module)
        return module

    # Exact type checks: isinstance against LibCST's abstract bases is slow, and this
    # runs on every node of every parsed file.
    def on_visit(self, node: cst.CSTNode) -> bool:
        node_type = type(node)
        if node_type in _IMPORTS:
            self.ctx.learn_import(node)
        if node_type in _STATEMENTS:
            self.ctx.statements.append(node)
            if self.piece is not None and node_type is cst.SimpleStatementLine:
                self._learn_skipped(node)
        for visit in self.visitors.get(node_type.__name__, ()):
            visit(node)
        return True

    def _learn_skipped(self, line: cst.SimpleStatementLine) -> None:
        """A slice's placeholder: the imports of the code it stands for, learned in place."""
        value = getattr(line.body[0], "value", None)
        index = Slice.placeholder_index(value.value) if type(value) is cst.Name else None
        if index is not None:
            for module, names in self.piece.skipped[index].imports:
                self.ctx.learn_names(module, names)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        node_type = type(original)
        for leave in self.leavers.get(node_type.__name__, ()):
            updated = leave(original, updated)
            if type(updated) is not node_type:
                break  # replaced by another kind of node, or removed: later rules do not apply
        if node_type in _STATEMENTS:
            self.ctx.statements.pop()
            if type(updated) is cst.SimpleStatementLine:
                updated = _tidy_line(original, updated)
            if type(updated) in _STATEMENTS:
                updated = self.ctx.attach_todos(original, updated)
            if type(updated) is cst.If:
                updated = self._collapse(original, updated)
        elif type(updated) in (cst.Module, cst.IndentedBlock):
            updated = _drop_removed_lines(self._flatten(updated))
        elif node_type is cst.IfExp and type(updated) is cst.IfExp:
            if branches.collapsible_ifexp(original, updated, self.qualname):
                updated = branches.ifexp_branch(updated)
        return updated

    def _collapse(self, original: cst.If, updated: cst.If) -> cst.If:
        """Notes an ``if`` whose branches the fixes made the same code; its block puts the
        branch in its place, once the rules have left that block (migrate_xla/branches.py)."""
        if type(updated.orelse) is cst.If and self.collapsed.pop(id(updated.orelse.body), None) is not None:
            updated = updated.with_changes(orelse=branches.as_else(updated.orelse))  # the last `elif`
        if branches.collapsible_if(original, updated, self.qualname):
            self.collapsed[id(updated.body)] = updated.body
        return updated

    def _flatten(self, block):
        """``block`` with each collapsed ``if`` replaced by its branch's statements; a branch
        of nothing but ``pass`` goes as a removed line does."""
        if not self.collapsed or not any(type(s) is cst.If and id(s.body) in self.collapsed for s in block.body):
            return block
        body: list[cst.BaseStatement] = []
        for statement in block.body:
            if type(statement) is not cst.If or self.collapsed.pop(id(statement.body), None) is None:
                body.append(statement)
                continue
            statements = branches.branch_statements(statement)
            if all(_is_pass(s) for s in statements):
                statements = [_removed_line(statement.leading_lines)]
            body.extend(statements)
        return block.with_changes(body=body)

    def _flatten_blocks(self, original: cst.CSTNode, updated: cst.CSTNode):
        if type(updated) in (cst.Module, cst.IndentedBlock):
            return _drop_removed_lines(self._flatten(updated))
        return updated


_STATEMENTS = subclasses(cst.BaseStatement)  # abstract ones too: no node's type is abstract
_IMPORTS = frozenset({cst.Import, cst.ImportFrom})


def _is_pass(statement: cst.BaseStatement) -> bool:
    return (
        type(statement) is cst.SimpleStatementLine
        and all(type(small) is cst.Pass for small in statement.body)
        and statement.trailing_whitespace.comment is None
    )


def _visit_nothing(node: cst.CSTNode) -> bool:
    return True


@cache
def _hooks(cls: type[Rule]) -> tuple[str, ...]:
    return tuple(
        name
        for name in dir(cls)
        if (name.startswith("visit_") or name.startswith("leave_")) and callable(getattr(cls, name))
    )


def migrate_woken(
    text: str, codes: Sequence[str], options: Options, filename: str, lap: Callable[[str], None]
) -> tuple[str, list[Diagnostic]]:
    """The rest of ``run.migrate_code`` for a unit that wakes the rules ``codes``."""
    triggered = registry.rules_of(codes)
    piece = _slice(text, triggered)
    lap("slice" if piece is not None else "slice not taken")
    if piece is not None:
        try:
            return _migrate(text, piece, triggered, options, filename, lap)
        except WholeModuleNeeded:
            lap("slice given up")
    return _migrate(text, None, triggered, options, filename, lap)


# Files shorter than this are parsed whole: slicing them saves less than it costs
# (4,000: 3% less time than 8,000 on torch's CUDA-heavy packages, benchmarks/README.md).
SLICE_FROM = 4000


def _slice(text: str, rules: Sequence[type[Rule]]) -> Slice | None:
    if len(text) < SLICE_FROM or any(rule.WHOLE_MODULE for rule in rules):
        return None
    return slice_text(text, _keep(rules))


def _keep(rules: Sequence[type[Rule]]) -> list[re.Pattern[str]]:
    """What keeps a unit in a slice: a trigger or context pattern of one of ``rules``.
    One pattern a rule, compiled once: a union for each file's own set of rules would
    be compiled again for most files."""
    return [p for rule in rules for p in (*patterns_of(rule)[0], *_context(rule))]


@cache
def _context(rule: type[Rule]) -> tuple[re.Pattern[str], ...]:
    return tuple(map(re.compile, rule.CONTEXT))


def _migrate(
    text: str,
    piece: Slice | None,
    rules: Sequence[type[Rule]],
    options: Options,
    filename: str,
    lap: Callable[[str], None],
) -> tuple[str, list[Diagnostic]]:
    """Parse ``text`` (or its slice ``piece``), run ``rules``, apply imports, check the result."""
    source = text if piece is None else piece.text
    try:
        module = parse_module(source)
    except cst.ParserSyntaxError as exc:
        if piece is not None:
            raise WholeModuleNeeded from None  # the whole file's own error, or none
        raise MigrationError(f"cannot parse: {_syntax_error(text, filename, exc)}") from None
    lap("parse")
    ctx = FileContext(unsafe_fixes=options.unsafe_fixes, target=options.target, sliced=piece is not None, source=source)
    new_module = RuleRunner(ctx, [rule(ctx) for rule in rules], piece).run(module)
    lap("rules")
    elsewhere = Counter if piece is None else piece.name_uses
    new_module = apply_imports(new_module, ctx.imports_to_add, ctx.imports_to_remove, elsewhere)
    lap("imports")
    diagnostics = _positioned(module, ctx, None if piece is None else piece.line)
    lap("positions")
    # Nothing changed: the traversal hands back the parsed module itself, whose code is
    # the text (LibCST round-trips byte for byte), so code generation is skipped.
    whole = str if piece is None else piece.splice
    new_text = text if new_module is module else whole(codegen(new_module))
    lap("codegen")
    if new_text != text:
        try:
            compile(new_text, filename, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise MigrationError(
                f"internal error: the migrated code does not compile ({exc.msg}, line {exc.lineno}); "
                "the file was left unchanged, please report this"
            ) from None
    lap("compile")
    return new_text, diagnostics


def _syntax_error(text: str, filename: str, exc: cst.ParserSyntaxError) -> str:
    """Python's own account of the error (clearer than the parser's), else LibCST's."""
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        if error.lineno is None:  # "source code string cannot contain null bytes"
            return error.msg
        return f"line {error.lineno}, column {error.offset or 1}: {error.msg}"
    except ValueError as error:  # null bytes, before Python 3.11.4
        return str(error)
    return f"line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}"


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


def _positioned(module: cst.Module, ctx: FileContext, line_of: Callable[[int], int] | None) -> list[Diagnostic]:
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
            )
        )
    return sorted(set(diagnostics), key=lambda d: (d.line, d.column, d.code, d.message))
