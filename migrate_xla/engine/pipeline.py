"""One file that wakes a rule, through the LibCST part of the pipeline (docs/design.md,
"The pipeline for one file"): a big file as a slice without what no woken rule needs
(migrate_xla/engine/slicing.py), one parse, every woken rule in one traversal (runner.py), the
scheduled imports applied once, the findings' positions (positions.py), code generation,
and the check that the result compiles. The pre-filter before it, without LibCST, is
run.py's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache

import libcst as cst

from migrate_xla.engine import registry, suppression
from migrate_xla.engine.imports import apply_imports
from migrate_xla.engine.positions import OriginalCode, positioned
from migrate_xla.engine.prefilter import patterns_of
from migrate_xla.engine.runner import RuleRunner
from migrate_xla.engine.slicing import Slice, slice_text
from migrate_xla.rule.api import FileContext, Rule, WholeModuleNeeded, comments_above_first
from migrate_xla.rule.findings import UNUSED_SUPPRESSION, Diagnostic, MigrationError
from migrate_xla.rule.settings import Settings
from migrate_xla.rule.tree import parse_module


def migrate_woken(
    text: str, codes: Sequence[str], settings: Settings, filename: str, lap: Callable[[str], None]
) -> tuple[str, list[Diagnostic]]:
    """The rest of ``run.migrate_code`` for a unit that wakes the rules ``codes``, under
    the file's ``settings`` (the rules read them as ``self.ctx.settings``)."""
    triggered = registry.rules_of(codes)
    piece = _slice(text, triggered, settings)
    lap("slice" if piece is not None else "slice not taken")
    if piece is not None:
        try:
            return _migrate(text, piece, triggered, settings, filename, lap)
        except WholeModuleNeeded:
            lap("slice given up")
    return _migrate(text, None, triggered, settings, filename, lap)


# Files shorter than this are parsed whole: slicing them saves less than it costs
# (2,000: 2% less time than 4,000 on torch's CUDA-heavy packages, the same as 1,000;
# benchmarks/README.md).
SLICE_FROM = 2000


def _slice(text: str, rules: Sequence[type[Rule]], settings: Settings) -> Slice | None:
    if (
        len(text) < SLICE_FROM
        or any(rule.whole_module(text, settings) for rule in rules)
        or suppression.may_suppress(text)  # a suppression comment anywhere may cover any statement
    ):
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
    settings: Settings,
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
    ctx = FileContext(
        settings,
        left_out=None if piece is None else piece.left_out(),
        source=source,
        comments_above=comments_above_first(module),
    )
    if piece is None and suppression.may_suppress(text):
        ctx.suppressions = suppression.Suppressions(text)
        ctx.suppressions.learn(module)
    new_module = RuleRunner(ctx, [rule(ctx) for rule in rules], piece).run(module)
    lap("rules")
    elsewhere = Counter if piece is None else piece.name_uses
    new_module = apply_imports(new_module, ctx.imports_to_add, ctx.imports_to_remove, elsewhere)
    lap("imports")
    unused = _unused_suppressions(ctx)
    code = OriginalCode(module)
    diagnostics = positioned(module, ctx, None if piece is None else piece.line, code) + unused
    lap("positions")
    # Nothing changed: the traversal hands back the parsed module itself, whose code is
    # the text (LibCST round-trips byte for byte), so code generation is skipped; else the
    # statements the positions' code generation went through and no rule changed are not
    # generated again (positions.OriginalCode).
    migrated = source if new_module is module else code.migrated(new_module)
    new_text = migrated if piece is None else piece.splice(migrated)
    lap("codegen")
    if new_text != text:
        # A slice's own code is what is compiled: the code it left out is the file's, unchanged
        # and in the same blocks (Slice.splice), each placeholder a statement where it was
        error = _compile_error(migrated, filename)
        if error is not None and piece is not None:
            error = _compile_error(new_text, filename)
        if error is not None:
            rejected = _python_error(text, filename)
            if rejected is not None:  # LibCST parsed what Python itself rejects (500 nested parentheses)
                raise MigrationError(f"cannot parse: {rejected}")
            raise MigrationError(
                f"internal error: the migrated code does not compile ({error.msg}, line {error.lineno}); "
                "the file was left unchanged, please report this"
            )
    lap("compile")
    return new_text, diagnostics


def _compile_error(code: str, filename: str) -> SyntaxError | None:
    """Python's error for ``code``, or None when it compiles."""
    try:
        compile(code, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        return error
    return None


def _unused_suppressions(ctx: FileContext) -> list[Diagnostic]:
    """XLA002 for each code of this tool's, enabled in this run, that a suppression comment
    names and that silenced nothing: a line's comment as a finding to position, a file's here."""
    enabled = ctx.settings.codes
    if ctx.suppressions is None or UNUSED_SUPPRESSION not in enabled:
        return []
    rule = registry.by_code(UNUSED_SUPPRESSION)
    found = []
    for comment in ctx.suppressions.comments():
        unused = ", ".join(c for c in comment.unused() if any(code.startswith(c) for code in enabled))
        if not unused:
            continue
        if comment.statement is not None:
            ctx.report(rule(ctx), comment.statement, f"`# noqa: {unused}` silences nothing here", fixed=False)
        else:
            message = f"`# xla-migrate: noqa: {unused}` silences nothing in this file"
            found.append(Diagnostic(rule.CODE, message, comment.line, 1, rule.SEVERITY, False, rule.FIX))
    return found


def _syntax_error(text: str, filename: str, exc: cst.ParserSyntaxError) -> str:
    """Python's own account of the error (clearer than the parser's), else LibCST's."""
    return _python_error(text, filename) or f"line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}"


def _python_error(text: str, filename: str) -> str | None:
    """Why Python itself rejects ``text``, or None when it compiles."""
    try:
        error = _compile_error(text, filename)
    except ValueError as null_bytes:  # before Python 3.11.4
        return str(null_bytes)
    if error is None:
        return None
    if error.lineno is None:  # "source code string cannot contain null bytes"
        return error.msg
    return f"line {error.lineno}, column {error.offset or 1}: {error.msg}"
