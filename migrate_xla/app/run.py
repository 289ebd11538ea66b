"""A run: files through the pre-filter and, when they wake a rule, the engine; many files
through a process pool.

A file that wakes no enabled rule (migrate_xla/engine/prefilter.py) is done here, without
LibCST or the rule modules: they are imported, with migrate_xla/engine/ (slice, parse,
rules, imports, positions, codegen), the first time a file wakes a rule. A pre-commit run over
files with no CUDA code then costs little more than starting Python and click.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from migrate_xla.engine import prefilter, registry
from migrate_xla.rule.findings import UNUSED_SUPPRESSION, Diagnostic, MigrationError
from migrate_xla.rule.settings import Settings
from migrate_xla.sources.discovery import CONFIG_SUFFIXES, Found
from migrate_xla.sources.reading import read_source
from migrate_xla.sources.source import Source, SourceError

if TYPE_CHECKING:
    from migrate_xla.rule.api import Rule


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
    text: str, settings: Settings, filename: str = "<unit>", lap: Callable[[str], None] = _no_lap
) -> tuple[str, list[Diagnostic]]:
    """Migrate one unit of Python code; raises MigrationError, never writes anything.

    The rules run again over their own output until it changes no more, as ruff applies
    its fixes: a rule may act on what another rule's fix made (XLA203 syncs an evaluation
    loop once XLA302 has wrapped its loader), so one pass is not always a fixpoint, and a
    second run must change nothing (docs/design.md, "The pipeline for one file"). A unit
    that still changes after MAX_PASSES passes is left as it was and reported with the
    rules that keep changing it. Without ``settings.fixpoint`` (--check), one pass reports
    the findings of the code as it is; whether the unit would change is the same answer,
    since a unit the first pass leaves alone is a fixpoint. ``lap(phase)`` is called as
    each phase ends (benchmarks/profile_corpus.py times them).
    """
    enabled = prefilter.enabled(settings.codes, settings.target, settings.runtime)
    passes: list[tuple[str, list[Diagnostic]]] = []  # each pass's input and findings
    current = text
    for _ in range(MAX_PASSES if settings.fixpoint else 1):
        woken = prefilter.woken(enabled, current)
        lap("pre-filter")
        if not woken:
            passes.append((current, []))
            break
        new_text, diagnostics = _pipeline().migrate_woken(current, [r.CODE for r in woken], settings, filename, lap)
        passes.append((current, diagnostics))
        current, unchanged = new_text, new_text == current
        if unchanged or not settings.fixpoint:
            break
    else:
        changing = _unsettled(passes[-1][0], [r.CODE for r in woken], settings, filename)
        raise MigrationError(
            f"internal error: the migration reaches no fixpoint: after {MAX_PASSES} passes "
            f"{changing} still change the code; the file was left unchanged, please report this"
        )
    return current, _findings_of_passes(passes)


def _unsettled(text: str, codes: list[str], settings: Settings, filename: str) -> str:
    """The rules that still change ``text`` (the last pass's input), each run alone; when
    none does alone, they change it together: the rules of the pass, named as such. A fix
    is not the only change a rule makes (a TODO comment is one), so what the findings say
    was fixed does not tell."""
    alone = [code for code in codes if _pipeline().migrate_woken(text, [code], settings, filename, _no_lap)[0] != text]
    return ", ".join(alone) if alone else f"the rules {', '.join(codes)} together"


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


def migrate_file(found: Found, settings: Settings) -> FileResult:
    """Read and migrate one file under the run's ``settings``; never raises, never writes."""
    result = FileResult(path=str(found.path), found=found)
    try:
        if found.path.suffix in CONFIG_SUFFIXES:
            return _migrate_config(result, settings)
        result.source = read_source(found.path)
        settings = settings.for_file(found.path)
        new_text, diagnostics = _with_deep_stack(migrate_code, result.source.text, settings, str(found.path))
        if new_text != result.source.text:
            result.source.units(new_text)  # a notebook whose cells cannot be split again is not written
        # locate adds what reading found (XLA001: a notebook cell left out), reported when enabled
        located = result.source.locate(diagnostics)
        enabled = settings.codes
        result.take(new_text, [d for d in located if d.code in enabled])
    except (SourceError, MigrationError) as exc:
        result.error = str(exc)
    except RecursionError:
        result.error = "internal error: the file nests too deeply to migrate; left unchanged"
    except Exception as exc:  # a rule's bug must not stop the other files
        result.new_text = None
        result.error = f"internal error: {type(exc).__name__}: {exc}; the file was left unchanged, please report this"
    return result


def _migrate_config(result: FileResult, settings: Settings) -> FileResult:
    """A YAML file: a framework's config converted (migrate_xla/engine/configs.py: Accelerate's, XLA827;
    a Lightning Trainer's, XLA828), any other YAML file left unread (pre-commit may name every
    staged one): no source, no finding."""
    from migrate_xla.engine import configs

    path = result.found.path
    kind = configs.kind_of_file(path, unreadable=True)
    if kind is None:
        return result
    result.source = read_source(path)
    if kind.CODE in settings.for_file(path).codes:
        result.take(*kind.convert(result.source.text, settings.runtime))
    else:
        result.take(result.source.text, [])
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
    left: dict[int | None, list[Diagnostic]] = {}  # by cell: each unit reads its own, not all
    for d in diagnostics:
        if not d.fixed:
            left.setdefault(d.cell, []).append(d)
    moved = {}
    for old, new in zip(source.units(source.text), source.units(new_text)):
        if old.text != new.text and old.cell in left:
            new_line = _line_mover(old.text, new.text)
            for d in left[old.cell]:
                moved[id(d)] = d._replace(line=new_line(d.line))
    return [moved.get(id(d), d) for d in diagnostics]


def _line_mover(old_text: str, new_text: str) -> Callable[[int], int]:
    """Where each line of ``old_text`` went in ``new_text``: a line difflib's
    ``SequenceMatcher`` (``autojunk=False``) finds equal goes to its match; a line of a
    replaced run to the line of its replacement that starts the same way (``y = ...``, the
    one such line on each side), else the k-th line of a run replaced by as many lines to
    the k-th of them, else to where its replacement starts; a line outside the text stays.

    The equal blocks come from ``_equal_blocks``: difflib's own search over two whole texts
    grows with the square of the lines that repeat (blank lines, ``return x``) and with the
    changes, and a write of a 25,000-line file spent 90 s in it (benchmarks/bench_dense.py).
    Each line is then found by bisection, not by a walk over the blocks.
    """
    from bisect import bisect_right

    old, new = old_text.splitlines(), new_text.splitlines()
    blocks = _equal_blocks(old, new)
    starts = [i for i, _, _ in blocks]
    count = len(old)
    ends = [*((i, j) for i, j, _ in blocks[1:]), (count, len(new))]  # where each gap after a block ends
    heads: dict[int, dict[int, int]] = {}  # a gap's lines paired by how they start

    def new_line(line: int) -> int:
        index = line - 1
        if not 0 <= index < count:
            return line
        k = bisect_right(starts, index) - 1
        if k >= 0 and index < blocks[k][0] + blocks[k][2]:
            i, j, _ = blocks[k]
            return j + index - i + 1
        # in the gap after block k (or before the first): a replaced or deleted run
        gap_old, gap_new = (blocks[k][0] + blocks[k][2], blocks[k][1] + blocks[k][2]) if k >= 0 else (0, 0)
        end_old, end_new = ends[k] if k >= 0 else (blocks[0][:2] if blocks else (count, len(new)))
        if k not in heads:
            heads[k] = _same_heads(old[gap_old:end_old], new[gap_new:end_new])
        offset = heads[k].get(index - gap_old)
        if offset is None:
            offset = index - gap_old if end_old - gap_old == end_new - gap_new else 0
        return gap_new + offset + 1

    return new_line


_HEAD = r"\s*[\w.]+\s*(?:[-+*/%@&|^]|//|>>|<<|\*\*)?=(?!=)|\s*(?:def|class|return|if|for|while|with)\b[^(:]*"  # compiled at the first use (re caches it)


def _same_heads(old: list[str], new: list[str]) -> dict[int, int]:
    """Lines of a replaced run paired with lines of its replacement that start the same way:
    the same assignment target (``y = ...``) or the same header, found once on each side."""

    def heads(lines: list[str]) -> dict[str, int]:
        found: dict[str, int | None] = {}
        for number, line in enumerate(lines):
            match = re.match(_HEAD, line)
            if match:
                head = match.group().strip()
                found[head] = None if head in found else number
        return {head: number for head, number in found.items() if number is not None}

    theirs = heads(new)
    return {number: theirs[head] for head, number in heads(old).items() if head in theirs}


def _equal_blocks(old: list[str], new: list[str]) -> list[tuple[int, int, int]]:
    """The equal blocks ``(i, j, size)`` of two lists of lines, in order, as difflib's
    ``SequenceMatcher`` would match them: every line of each file that a write changes in
    torch and torch_xla (both fix modes) goes where difflib sent it (benchmarks/README.md).

    Anchors first, as in patience diff: the lines found once in each list, the longest
    run of them in the same order (the earliest, as difflib prefers); each anchor grows
    into the equal run around it. Where two runs want the same lines, the longer keeps
    them (difflib takes the longest block first; ties to the earliest). Only between the
    runs does difflib search, each gap on its own: gaps are small where anchors are dense,
    and a text without any is searched whole, as before. O(n log n) besides the gaps.
    """
    import difflib  # only after a write: --check of one file does not load it
    import heapq
    from collections import Counter

    in_old, in_new = Counter(old), Counter(new)
    once = {line: j for j, line in enumerate(new) if in_new[line] == 1}
    pairs = [(i, once[line]) for i, line in enumerate(old) if in_old[line] == 1 and line in once]
    runs: list[list[int]] = []  # [i, j, size]: the equal run through each anchor
    for i, j in _earliest_increasing(pairs):
        if runs and i < runs[-1][0] + runs[-1][2]:
            continue  # in the previous anchor's run
        first_i, first_j = i, j
        while first_i and first_j and old[first_i - 1] == new[first_j - 1]:
            first_i, first_j = first_i - 1, first_j - 1
        end_i, end_j = i + 1, j + 1
        while end_i < len(old) and end_j < len(new) and old[end_i] == new[end_j]:
            end_i, end_j = end_i + 1, end_j + 1
        runs.append([first_i, first_j, end_i - first_i])
    # A run can overlap only its neighbours (a run cannot pass another's anchor, a line
    # found once): the longest first, each clipping the neighbours not placed yet.
    heap = [(-size, i, j, k) for k, (i, j, size) in enumerate(runs)]
    heapq.heapify(heap)
    placed = [False] * len(runs)
    while heap:
        minus_size, i, j, k = heapq.heappop(heap)
        if placed[k] or runs[k] != [i, j, -minus_size]:
            continue  # clipped since it was pushed
        placed[k] = True
        end_i, end_j = i - minus_size, j - minus_size
        if k and not placed[k - 1]:
            left = runs[k - 1]
            size = min(left[2], i - left[0], j - left[1])
            if size != left[2]:
                left[2] = size
                heapq.heappush(heap, (-size, left[0], left[1], k - 1))
        if k + 1 < len(runs) and not placed[k + 1]:
            right = runs[k + 1]
            shift = max(0, end_i - right[0], end_j - right[1])
            if shift:
                right[0], right[1], right[2] = right[0] + shift, right[1] + shift, right[2] - shift
                heapq.heappush(heap, (-right[2], right[0], right[1], k + 1))
    blocks: list[tuple[int, int, int]] = []
    done_i = done_j = 0
    for i, j, size in [*runs, [len(old), len(new), 0]]:
        if i > done_i and j > done_j:
            gap = difflib.SequenceMatcher(None, old[done_i:i], new[done_j:j], autojunk=False)
            blocks.extend((done_i + a, done_j + b, n) for a, b, n in gap.get_matching_blocks() if n)
        if size:
            blocks.append((i, j, size))
        done_i, done_j = i + size, j + size
    return blocks


def _earliest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (increasing in i, distinct j) increasing in j,
    the earliest pairs among the longest: each pair's longest run from it (patience
    sorting from the end), then the first pair of each length, in O(n log n)."""
    from bisect import bisect_left

    tops: list[int] = []  # tops[k]: the greatest -j that starts a run of k + 1 pairs, of those seen
    longest = [0] * len(pairs)
    for index in range(len(pairs) - 1, -1, -1):
        key = -pairs[index][1]
        k = bisect_left(tops, key)
        if k == len(tops):
            tops.append(key)
        else:
            tops[k] = key
        longest[index] = k + 1
    run = []
    need, last = len(tops), -1
    for index, pair in enumerate(pairs):
        if need and longest[index] == need and pair[1] > last:
            run.append(pair)
            need, last = need - 1, pair[1]
    return run


# Python's cyclic garbage collector runs every 700 allocations, and each LibCST parse
# makes millions of objects that it then traverses again and again (a tenth of the run,
# benchmarks/README.md). No cycle reaches a tree (refcounting frees it when its file is
# done: tests/test_rule_speed.py), so files are migrated with automatic collection off and
# one collection every COLLECT_EVERY files for the few small cycles there are.
COLLECT_EVERY = 20
_migrated = 0


def _migrate_counted(found: Found, settings: Settings) -> FileResult:
    global _migrated
    result = migrate_file(found, settings)
    _migrated += 1
    if _migrated % COLLECT_EVERY == 0:
        gc.collect()
    return result


def _migrate_chunk(args: tuple[Found, Settings]) -> FileResult:
    return _migrate_counted(*args)


def _start_worker() -> None:
    gc.disable()
    gc.freeze()  # what the worker imported is never garbage: later collections skip it


# Files migrated in this process before the pool starts, when none of them wakes a rule.
SOLO = 16


def migrate_files(files: Sequence[Found], settings: Settings, jobs: int | None = None) -> Iterator[FileResult]:
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
            yield _migrate_counted(found, settings)
            done += 1
    finally:
        if enabled:
            gc.enable()
    rest = files[done:]
    if not rest:
        return
    from concurrent.futures import ProcessPoolExecutor  # only for many files: it costs 25 ms to import

    # Files take very different times (most are never parsed): chunks of at most 8 keep
    # every worker busy to the end (32 left one idle for 3% of a run over torch), and the
    # biggest files go first, so that the last chunks are the shortest; results come back in
    # the files' order.
    chunk = max(1, min(8, len(rest) // (jobs * 8)))
    order = sorted(range(len(rest)), key=lambda i: -_size(rest[i].path))
    waiting: dict[int, FileResult] = {}
    ready = 0  # the index in rest of the next result to yield
    with ProcessPoolExecutor(max_workers=min(jobs, len(rest)), initializer=_start_worker) as pool:
        for index, result in zip(
            order, pool.map(_migrate_chunk, [(rest[i], settings) for i in order], chunksize=chunk)
        ):
            waiting[index] = result
            while ready in waiting:
                yield waiting.pop(ready)
                ready += 1


def _size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # migrate_file reports it


def enabled_rules(settings: Settings) -> tuple[type[Rule], ...]:
    """The rule classes ``settings`` enables for its target and runtime (this imports them, and LibCST)."""
    return registry.rules_of(rule.CODE for rule in prefilter.enabled(settings.codes, settings.target, settings.runtime))


def options_for(**given) -> Settings:
    """``Settings.of``: settings from keywords (``select=["XLA2"]``, ``unsafe_fixes=True``,
    ``target="spmd"``), checked; the tests' and benchmarks' short way to them."""
    return Settings.of(**given)
