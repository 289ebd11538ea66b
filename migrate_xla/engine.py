"""One file through the migration pipeline; many files through a process pool.

The pipeline (design.md, "The pipeline for one file"): pre-filter with the enabled
rules' triggers, parse once (a big file as a slice without what no woken rule needs,
migrate_xla/slicing.py), run every woken rule in code order in one traversal, apply
the scheduled imports once, check that the result compiles.
"""

from __future__ import annotations

import dataclasses
import gc
from contextlib import contextmanager
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import libcst as cst

from migrate_xla import registry
from migrate_xla.imports import apply_imports
from migrate_xla.rule import TARGETS, Diagnostic, FileContext, Rule, WholeModuleNeeded
from migrate_xla.slicing import Slice, slice_text
from migrate_xla.sources import Found, Patterns, Source, SourceError, read_source
from migrate_xla.tree import TRIVIA, FastCodegen, Transformer, codegen, subclasses


class MigrationError(Exception):
    """A unit of code the engine could not migrate; it is left exactly as it was."""


@dataclass(frozen=True)
class Options:
    """What a worker process needs to migrate a file (picklable)."""

    codes: tuple[str, ...]
    unsafe_fixes: bool = False
    target: str = TARGETS[0]
    # per-file-ignores: (pattern relative to root, rule codes it turns off), in order
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."

    @property
    def rules(self) -> tuple[type[Rule], ...]:
        return _rules_for(self.codes, self.target)

    def for_file(self, path: str | os.PathLike) -> "Options":
        """These options less the codes a per-file-ignores pattern covering ``path`` turns off."""
        off = {
            code
            for pattern, codes in self.per_file_ignores
            if _patterns(self.root, pattern).covers(Path(path))
            for code in codes
        }
        if not off:
            return self
        return dataclasses.replace(self, codes=tuple(c for c in self.codes if c not in off))


@lru_cache(maxsize=None)
def _patterns(root: str, pattern: str) -> Patterns:
    return Patterns.parse(Path(root), [pattern])


@lru_cache(maxsize=None)
def _rules_for(codes: tuple[str, ...], target: str) -> tuple[type[Rule], ...]:
    """The selected rules that the target enables (a target's own rules only under it)."""
    wanted = set(codes)
    return tuple(rule for rule in registry.all_rules() if rule.CODE in wanted and target in rule.TARGETS)


@lru_cache(maxsize=None)
def _patterns_of(rule: type[Rule]) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The rule's TRIGGERS and its REQUIRES, compiled one by one: a pattern led by a literal
    is searched for that literal at C speed; a union of them is not (it tries each position)."""
    return tuple(map(re.compile, rule.TRIGGERS)), tuple(map(re.compile, rule.REQUIRES))


def _triggered(rules: Sequence[type[Rule]], text: str) -> list[type[Rule]]:
    """The rules whose own triggers occur in ``text`` (one of TRIGGERS and each of
    REQUIRES): a necessary condition for a rule to act; a file that wakes none is not
    parsed, and on average a parsed file wakes 5 of the 35 rules."""
    woken = []
    for rule in rules:
        triggers, requires = _patterns_of(rule)
        if any(p.search(text) for p in triggers) and all(p.search(text) for p in requires):
            woken.append(rule)
    return woken


@dataclass
class FileResult:
    path: str
    source: Source | None = None
    new_text: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None
    found: Found | None = None

    @property
    def changed(self) -> bool:
        return self.source is not None and self.new_text is not None and self.new_text != self.source.text


class RuleRunner:
    """Runs the visit/leave methods of many rules in one traversal, in rule order.

    It also keeps the import-alias table (imports are seen before the code that uses
    them) and the stack of enclosing statements that TODO comments attach to. The
    traversal is ``tree.Transformer``'s: LibCST's ``CSTTransformer`` rebuilds every node
    of the file, this one only those whose children changed, and it does not enter
    layout (whitespace, brackets, operators) that no rule looks at.
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
        self.transformer = Transformer(self.on_visit, self.on_leave, TRIVIA - hooked)

    def run(self, module: cst.Module) -> cst.Module:
        return self.transformer.transform(module)

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
        elif type(updated) in (cst.Module, cst.IndentedBlock):
            updated = _drop_removed_lines(updated)
        return updated


_STATEMENTS = subclasses(cst.BaseStatement)  # abstract ones too: no node's type is abstract
_IMPORTS = frozenset({cst.Import, cst.ImportFrom})


# A statement line whose every small statement a rule removed is kept as this
# placeholder until its block is left, so that its comments can move to the next
# statement instead of vanishing with it (LibCST drops an empty line whole).
_REMOVED = "__xla_migrate_removed__"


def _tidy_line(original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
    if len(updated.body) == len(original.body):
        return updated
    if not updated.body:
        return updated.with_changes(body=[cst.Expr(cst.Name(_REMOVED))])
    last = updated.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(body=[*updated.body[:-1], last])


def _is_removed(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.Name)
        and statement.body[0].value.value == _REMOVED
    )


def _drop_removed_lines(block):
    if not any(_is_removed(s) for s in block.body):
        return block
    body: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for statement in block.body:
        if _is_removed(statement):
            carried.extend(statement.leading_lines)
            continue
        if carried:
            has_comment = any(line.comment is not None for line in carried)
            if has_comment or not statement.leading_lines:
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
            carried = []
        body.append(statement)
    if any(line.comment is not None for line in carried) or (not body and isinstance(block, cst.IndentedBlock)):
        body.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried))
    return block.with_changes(body=body)


@lru_cache(maxsize=None)
def _hooks(cls: type[Rule]) -> tuple[str, ...]:
    return tuple(
        name
        for name in dir(cls)
        if (name.startswith("visit_") or name.startswith("leave_")) and callable(getattr(cls, name))
    )


def _no_lap(phase: str) -> None:
    pass


def migrate_code(
    text: str, options: Options, filename: str = "<unit>", lap: Callable[[str], None] = _no_lap
) -> tuple[str, list[Diagnostic]]:
    """Migrate one unit of Python code; raises MigrationError, never writes anything.

    ``lap(phase)`` is called as each phase ends (benchmarks/profile_corpus.py times them).
    """
    triggered = _triggered(options.rules, text)
    lap("pre-filter")
    if not triggered:
        return text, []
    piece = _slice(text, triggered)
    lap("slice" if piece is not None else "slice not taken")
    if piece is not None:
        try:
            return _migrate(text, piece, triggered, options, filename, lap)
        except WholeModuleNeeded:
            lap("slice given up")
    return _migrate(text, None, triggered, options, filename, lap)


# Files shorter than this are parsed whole: slicing them saves less than it costs.
SLICE_FROM = 8000


def _slice(text: str, rules: Sequence[type[Rule]]) -> Slice | None:
    if len(text) < SLICE_FROM or any(rule.WHOLE_MODULE for rule in rules):
        return None
    return slice_text(text, _keep(rules))


def _keep(rules: Sequence[type[Rule]]) -> list[re.Pattern[str]]:
    """What keeps a unit in a slice: a trigger or context pattern of one of ``rules``.
    One pattern a rule, compiled once: a union for each file's own set of rules would
    be compiled again for most files."""
    return [p for rule in rules for p in (*_patterns_of(rule)[0], *_context(rule))]


@lru_cache(maxsize=None)
def _context(rule: type[Rule]) -> tuple[re.Pattern[str], ...]:
    return tuple(map(re.compile, rule.CONTEXT))


def _migrate(
    text: str, piece: Slice | None, rules: Sequence[type[Rule]], options: Options, filename: str,
    lap: Callable[[str], None],
) -> tuple[str, list[Diagnostic]]:
    """Parse ``text`` (or its slice ``piece``), run ``rules``, apply imports, check the result."""
    source = text if piece is None else piece.text
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        if piece is not None:
            raise WholeModuleNeeded from None  # the whole file's own error, or none
        raise MigrationError(f"cannot parse: {_syntax_error(text, filename, exc)}") from None
    lap("parse")
    ctx = FileContext(
        unsafe_fixes=options.unsafe_fixes, target=options.target, sliced=piece is not None, source=source
    )
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
    of generating the code; findings need a few (benchmarks/README.md).
    """

    wanted: set[int] = field(default_factory=set)
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
        default_indent=module.default_indent, default_newline=module.default_newline, wanted=wanted
    )
    module._codegen(recorder)
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


def migrate_file(found: Found, options: Options) -> FileResult:
    """Read and migrate one file; never raises, never writes."""
    result = FileResult(path=str(found.path), found=found)
    try:
        result.source = read_source(found.path)
        options = options.for_file(found.path)
        new_text, diagnostics = migrate_code(result.source.text, options, str(found.path))
        if new_text != result.source.text:
            result.source.units(new_text)  # a notebook whose cells cannot be split again is not written
        # locate adds what reading found (XLA001: a notebook cell left out), reported when enabled
        located = result.source.locate(diagnostics)
        result.new_text, result.diagnostics = new_text, [d for d in located if d.code in options.codes]
    except (SourceError, MigrationError) as exc:
        result.error = str(exc)
    except RecursionError:
        result.error = "internal error: the file nests too deeply to migrate; left unchanged"
    except Exception as exc:  # a rule's bug must not stop the other files
        result.new_text = None
        result.error = f"internal error: {type(exc).__name__}: {exc}; the file was left unchanged, please report this"
    return result


def relocate(diagnostics: list[Diagnostic], source: Source, new_text: str) -> list[Diagnostic]:
    """Findings left for a person, moved to their lines in the migrated text.

    After a write the user opens the written file, where added imports and TODO
    comments shifted the lines. Fixed findings keep their place in the original.
    Lines are counted in each unit (a notebook cell) on its own.
    """
    if source.text == new_text or all(d.fixed for d in diagnostics):
        return diagnostics
    moved = {}
    for old, new in zip(source.units(source.text), source.units(new_text)):
        if old.text != new.text:
            new_line = _line_mover(old.text, new.text)
            for d in diagnostics:
                if d.cell == old.cell and not d.fixed:
                    moved[id(d)] = dataclasses.replace(d, line=new_line(d.line))
    return [moved.get(id(d), d) for d in diagnostics]


def _line_mover(old_text: str, new_text: str) -> Callable[[int], int]:
    import difflib  # only after a write: --check of one file does not load it

    matcher = difflib.SequenceMatcher(None, old_text.splitlines(), new_text.splitlines(), autojunk=False)
    blocks = matcher.get_opcodes()

    def new_line(line: int) -> int:
        for tag, old_start, old_end, new_start, new_end in blocks:
            if old_start < line <= old_end or (old_start == old_end and line == old_start + 1 and tag == "insert"):
                if tag == "equal":
                    return new_start + (line - old_start)
                if tag != "insert":
                    return new_start + 1
        return line

    return new_line


# Python's cyclic garbage collector runs every 700 allocations, and each LibCST parse
# makes millions of objects that it then traverses again and again (a tenth of the run,
# benchmarks/README.md). The trees hold no cycles (refcounting frees them), so files are
# migrated with automatic collection off and one collection every COLLECT_EVERY files
# for the few cycles there are.
COLLECT_EVERY = 20
_migrated = 0


def _migrate_counted(found: Found, options: Options) -> FileResult:
    global _migrated
    result = migrate_file(found, options)
    _migrated += 1
    if _migrated % COLLECT_EVERY == 0:
        gc.collect()
    return result


def _migrate_chunk(args: tuple[Found, Options]) -> FileResult:
    return _migrate_counted(*args)


def _start_worker() -> None:
    gc.disable()
    gc.freeze()  # what the worker imported is never garbage: later collections skip it


def migrate_files(
    files: Sequence[Found], options: Options, jobs: int | None = None
) -> Iterator[FileResult]:
    """Migrate many files, in a process pool when there are several; results in order."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(files) <= 1:
        enabled = gc.isenabled()
        gc.disable()
        try:
            for found in files:
                yield _migrate_counted(found, options)
        finally:
            if enabled:
                gc.enable()
        return
    from concurrent.futures import ProcessPoolExecutor  # only for many files: it costs 25 ms to import

    chunk = max(1, min(32, len(files) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=min(jobs, len(files)), initializer=_start_worker) as pool:
        yield from pool.map(_migrate_chunk, [(f, options) for f in files], chunksize=chunk)


def options_for(
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
    target: str = TARGETS[0],
    per_file_ignores: Iterable[tuple[str, Iterable[str]]] = (),
    root: str | os.PathLike = ".",
) -> Options:
    """Options from rule codes or prefixes (``per_file_ignores``: pattern -> codes or prefixes)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: one of {', '.join(TARGETS)}")
    codes = tuple(rule.CODE for rule in registry.select(select, ignore))
    per_file = []
    for pattern, prefixes in per_file_ignores:
        prefixes = list(prefixes)  # none turns nothing off (an empty selection would mean every rule)
        per_file.append((pattern, tuple(rule.CODE for rule in registry.select(prefixes)) if prefixes else ()))
    return Options(codes, unsafe_fixes, target, tuple(per_file), os.fspath(root))
