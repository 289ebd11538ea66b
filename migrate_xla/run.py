"""A run: files through the pre-filter and, when they wake a rule, the engine; many files
through a process pool.

A file that wakes no enabled rule (migrate_xla/prefilter.py) is done here, without
LibCST or the rule modules: they are imported, with migrate_xla/engine/ (slice, parse,
rules, imports, positions, codegen), the first time a file wakes a rule. A pre-commit run over
files with no CUDA code then costs little more than starting Python and click.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from migrate_xla import prefilter, registry
from migrate_xla.findings import TARGETS, UNUSED_SUPPRESSION, Diagnostic, MigrationError
from migrate_xla.sources.discovery import Found, Patterns
from migrate_xla.sources.reading import read_source
from migrate_xla.sources.source import Source, SourceError

if TYPE_CHECKING:
    from migrate_xla.rule import Rule


class Options(NamedTuple):
    """What a worker process needs to migrate a file (picklable)."""

    codes: tuple[str, ...]
    unsafe_fixes: bool = False
    target: str = TARGETS[0]
    # per-file-ignores: (pattern relative to root, rule codes it turns off), in order
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."
    # Repeat the rules over their own output until it changes no more (migrate_code); off for
    # --check, which reports what the rules find in the code as it is, as ruff's check does.
    fixpoint: bool = True

    @property
    def rules(self) -> tuple[type[Rule], ...]:
        """The enabled rule classes (this imports them, and LibCST)."""
        return registry.rules_of(rule.CODE for rule in prefilter.enabled(self.codes, self.target))

    def for_file(self, path: str | os.PathLike) -> Options:
        """These options less the codes a per-file-ignores pattern covering ``path`` turns off."""
        off = {
            code
            for pattern, codes in self.per_file_ignores
            if _patterns(self.root, pattern).covers(Path(path))
            for code in codes
        }
        if not off:
            return self
        return self._replace(codes=tuple(c for c in self.codes if c not in off))


@cache
def _patterns(root: str, pattern: str) -> Patterns:
    return Patterns.parse(Path(root), [pattern])


class FileResult:
    """One file's result: its source as read, the migrated text, the findings, or why it failed."""

    def __init__(
        self,
        path: str,
        source: Source | None = None,
        new_text: str | None = None,
        diagnostics: list[Diagnostic] | None = None,
        error: str | None = None,
        found: Found | None = None,
    ) -> None:
        self.path = path
        self.source = source
        self.new_text = new_text
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.suppressed: list[Diagnostic] = []  # silenced by a suppression comment: --stats counts them
        self.error = error
        self.found = found

    def take(self, new_text: str, diagnostics: list[Diagnostic]) -> None:
        """The migration's result: the new text, the findings to report and those suppressed."""
        self.new_text = new_text
        self.diagnostics = [d for d in diagnostics if not d.suppressed]
        self.suppressed = [d for d in diagnostics if d.suppressed]

    @property
    def changed(self) -> bool:
        return self.source is not None and self.new_text is not None and self.new_text != self.source.text


def _no_lap(phase: str) -> None:
    pass


def migrate_code(
    text: str, options: Options, filename: str = "<unit>", lap: Callable[[str], None] = _no_lap
) -> tuple[str, list[Diagnostic]]:
    """Migrate one unit of Python code; raises MigrationError, never writes anything.

    The rules run again over their own output until it changes no more, as ruff applies
    its fixes: a rule may act on what another rule's fix made (XLA203 syncs an evaluation
    loop once XLA302 has wrapped its loader), so one pass is not always a fixpoint, and a
    second run must change nothing (docs/design.md, "The pipeline for one file"). A unit
    that still changes after MAX_PASSES passes is left as it was and reported with the
    rules that keep changing it. Without ``options.fixpoint`` (--check), one pass reports
    the findings of the code as it is; whether the unit would change is the same answer,
    since a unit the first pass leaves alone is a fixpoint. ``lap(phase)`` is called as
    each phase ends (benchmarks/profile_corpus.py times them).
    """
    enabled = prefilter.enabled(options.codes, options.target)
    settings = {"unsafe_fixes": options.unsafe_fixes, "target": options.target, "enabled": options.codes}
    passes: list[tuple[str, list[Diagnostic]]] = []  # each pass's input and findings
    current = text
    for _ in range(MAX_PASSES if options.fixpoint else 1):
        woken = prefilter.woken(enabled, current)
        lap("pre-filter")
        if not woken:
            passes.append((current, []))
            break
        new_text, diagnostics = _pipeline().migrate_woken(current, [r.CODE for r in woken], settings, filename, lap)
        passes.append((current, diagnostics))
        current, unchanged = new_text, new_text == current
        if unchanged or not options.fixpoint:
            break
    else:
        changing = sorted({d.code for d in passes[-1][1] if d.fixed})
        raise MigrationError(
            f"internal error: the migration reaches no fixpoint: after {MAX_PASSES} passes "
            f"{', '.join(changing)} still change the code; the file was left unchanged, please report this"
        )
    return current, _findings_of_passes(passes)


# Passes a unit may take before it is called non-converging: the fixtures, the examples and
# torch's own code need at most 3 (tests/test_fixpoint.py).
MAX_PASSES = 5


def _findings_of_passes(passes: list[tuple[str, list[Diagnostic]]]) -> list[Diagnostic]:
    """One report of several passes, on the lines of the first pass's input: the first
    pass's findings (what --check reports), and what each later pass fixed or found
    suppressed anew, moved back from the text that pass read. What is left for a person is
    the first pass's account, of the code as the user wrote it: a later pass tells of the
    same code again in the words of the fixes before it. Whether a suppression comment
    silenced anything (XLA002) is the last pass's answer, though: a comment may cover what
    only a later pass finds."""
    first_text, findings = passes[0]
    if len(passes) == 1:
        return findings
    findings = [d for d in findings if d.code != UNUSED_SUPPRESSION]
    seen = {(d.code, d.message) for d in findings if d.suppressed}
    for number, (text, diagnostics) in enumerate(passes[1:], 2):
        last = number == len(passes)
        new = [
            d
            for d in diagnostics
            if d.fixed or (d.suppressed and (d.code, d.message) not in seen) or (last and d.code == UNUSED_SUPPRESSION)
        ]
        seen.update((d.code, d.message) for d in new if d.suppressed)
        findings += _moved_back(text, first_text, new)
    return sorted(set(findings), key=lambda d: (d.line, d.column, d.code, d.message))


def _moved_back(text: str, first_text: str, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    if not diagnostics:
        return []
    line_in_first = _line_mover(text, first_text)
    return [d._replace(line=line_in_first(d.line)) for d in diagnostics]


_ENGINE = "migrate_xla.engine.pipeline"


def _pipeline():
    """migrate_xla.engine.pipeline, and with it LibCST and the rules: imported when a file first wakes a rule."""
    pipeline = sys.modules.get(_ENGINE)
    if pipeline is None:
        from migrate_xla.engine import pipeline

        gc.freeze()  # what it imported is never garbage: the collections every COLLECT_EVERY files skip it
    return pipeline


def migrate_file(found: Found, options: Options) -> FileResult:
    """Read and migrate one file; never raises, never writes."""
    result = FileResult(path=str(found.path), found=found)
    try:
        result.source = read_source(found.path)
        options = options.for_file(found.path)
        new_text, diagnostics = _with_deep_stack(migrate_code, result.source.text, options, str(found.path))
        if new_text != result.source.text:
            result.source.units(new_text)  # a notebook whose cells cannot be split again is not written
        # locate adds what reading found (XLA001: a notebook cell left out), reported when enabled
        located = result.source.locate(diagnostics)
        result.take(new_text, [d for d in located if d.code in options.codes])
    except (SourceError, MigrationError) as exc:
        result.error = str(exc)
    except RecursionError:
        result.error = "internal error: the file nests too deeply to migrate; left unchanged"
    except Exception as exc:  # a rule's bug must not stop the other files
        result.new_text = None
        result.error = f"internal error: {type(exc).__name__}: {exc}; the file was left unchanged, please report this"
    return result


# A file that nests deeply is migrated again with room for it: LibCST walks its trees
# recursively, and a valid 500-term sum `a + ... + a` is a tree 500 levels deep (5 frames a
# level), past Python's default limit of 1,000 frames. CPython's own parser stops at 200 nested
# parentheses, and such a file is reported as one it cannot parse.
DEEP_RECURSION = 100_000
DEEP_STACK = 512 * 1024 * 1024  # bytes: what that many frames may need of the C stack


def _with_deep_stack(function, *args):
    """``function(*args)``; after a RecursionError, once more in a thread with a deep stack."""
    try:
        return function(*args)
    except RecursionError:
        pass
    import threading  # only for such a file

    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    limit, size = sys.getrecursionlimit(), threading.stack_size(DEEP_STACK)
    sys.setrecursionlimit(DEEP_RECURSION)
    try:
        thread = threading.Thread(target=run, name="deep-file")
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(size)
    done, value = outcome[0]
    if not done:
        raise value
    return value


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
                    moved[id(d)] = d._replace(line=new_line(d.line))
    return [moved.get(id(d), d) for d in diagnostics]


def _line_mover(old_text: str, new_text: str) -> Callable[[int], int]:
    import difflib  # only after a write: --check of one file does not load it

    matcher = difflib.SequenceMatcher(None, old_text.splitlines(), new_text.splitlines(), autojunk=False)
    blocks = matcher.get_opcodes()

    def new_line(line: int) -> int:
        for tag, old_start, old_end, new_start, _new_end in blocks:
            if old_start < line <= old_end or (old_start == old_end and line == old_start + 1 and tag == "insert"):
                if tag == "equal":
                    return new_start + (line - old_start)
                if tag != "insert":
                    return new_start + 1
        return line

    return new_line


# Python's cyclic garbage collector runs every 700 allocations, and each LibCST parse
# makes millions of objects that it then traverses again and again (a tenth of the run,
# benchmarks/README.md). No cycle reaches a tree (refcounting frees it when its file is
# done: tests/test_rule_speed.py), so files are migrated with automatic collection off and
# one collection every COLLECT_EVERY files for the few small cycles there are.
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


# Files migrated in this process before the pool starts, when none of them wakes a rule.
SOLO = 16


def migrate_files(files: Sequence[Found], options: Options, jobs: int | None = None) -> Iterator[FileResult]:
    """Migrate many files, in a process pool when there are several; results in order.

    The pool starts when a file first wakes a rule, once this process has imported the
    engine for it: its workers are forked with LibCST and the rules loaded, rather than
    importing them each (half a second of CPU a worker). A run whose first SOLO files wake
    nothing starts it then, and a run whose files all wake nothing (most pre-commit runs)
    never starts one.
    """
    jobs = jobs or os.cpu_count() or 1
    enabled = gc.isenabled()
    gc.disable()
    try:
        done = 0
        for found in files:
            if jobs > 1 and (done == SOLO or _ENGINE in sys.modules):
                break
            yield _migrate_counted(found, options)
            done += 1
    finally:
        if enabled:
            gc.enable()
    rest = files[done:]
    if not rest:
        return
    from concurrent.futures import ProcessPoolExecutor  # only for many files: it costs 25 ms to import

    # Files take very different times (most are never parsed): chunks of at most 8 keep
    # every worker busy to the end (32 left one idle for 3% of a run over torch).
    chunk = max(1, min(8, len(rest) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=min(jobs, len(rest)), initializer=_start_worker) as pool:
        yield from pool.map(_migrate_chunk, [(f, options) for f in rest], chunksize=chunk)


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
    codes = registry.select(select, ignore)
    per_file = []
    for pattern, prefixes in per_file_ignores:
        prefixes = list(prefixes)  # none turns nothing off (an empty selection would mean every rule)
        per_file.append((pattern, registry.select(prefixes) if prefixes else ()))
    return Options(codes, unsafe_fixes, target, tuple(per_file), os.fspath(root))
