"""Where the corpus time goes: CPU time of each phase of the engine (``run.migrate_code``
itself reports the end of each phase to a ``lap`` callback), in-process and
single-threaded, on every Nth file of the installed torch package, against LibCST
parse + codegen of the same files (the baseline of bench_corpus.py). As in a real run,
the engine runs with the cyclic garbage collector off and one collection every
run.COLLECT_EVERY files (counted as "collect"), the baseline with it on.

    .venv/bin/python benchmarks/profile_corpus.py        # every 8th file (253 files)
    .venv/bin/python benchmarks/profile_corpus.py 4      # every 4th
    .venv/bin/python benchmarks/profile_corpus.py 0      # the first 400 (bench_corpus.py --limit 400)
    .venv/bin/python benchmarks/profile_corpus.py 2 cuda-heavy   # every 2nd file of bench_corpus.py's CUDA-heavy corpus
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import libcst as cst  # noqa: E402
from bench_corpus import CORPORA, torch_dir, walk  # noqa: E402

from migrate_xla.app import run  # noqa: E402
from migrate_xla.sources.reading import read_source  # noqa: E402

# The phases engine.migrate_code reports to its ``lap`` (a slice not taken: the time spent
# finding that it would not pay; given up: the slice's run that a rule ended).
PHASES = (
    "read",
    "pre-filter",
    "slice",
    "slice not taken",
    "slice given up",
    "parse",
    "rules",
    "imports",
    "positions",
    "codegen",
    "compile",
    "collect",
)


def main() -> int:
    step = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    torch = torch_dir().resolve()
    files = [path for part in CORPORA[sys.argv[2] if len(sys.argv) > 2 else "torch"][0] for path in walk(torch / part)]
    files = files[:400] if step == 0 else files[::step]
    options = run.options_for(fixpoint=False)  # --check, as bench_corpus.py runs it: one pass
    spent = dict.fromkeys((*PHASES, "baseline parse", "baseline codegen"), 0.0)
    laps: Counter = Counter()
    for number, path in enumerate(files, 1):
        clock = time.process_time()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.process_time()
            spent[phase] += now - clock
            laps[phase] += 1
            clock = now

        text = read_source(path).text
        lap("read")
        baseline = cst.parse_module(text)
        lap("baseline parse")
        _ = baseline.code
        lap("baseline codegen")
        gc.disable()
        run.migrate_code(text, options, str(path), lap)
        if number % run.COLLECT_EVERY == 0:
            gc.collect()
        lap("collect")
        gc.enable()
    base = spent["baseline parse"] + spent["baseline codegen"]
    print(
        f"{len(files)} files, {laps['slice'] + laps['slice not taken']} parsed by the engine ({laps['slice']} as a "
        f"slice, {laps['slice given up']} of them again whole); "
        f"CPU seconds and share of the baseline ({base:.2f} s)"
    )
    for phase, seconds in spent.items():
        print(f"  {phase:17s} {seconds:7.2f} s  {seconds / base:5.2f}")
    tool = sum(spent[p] for p in PHASES)
    print(f"engine {tool:.2f} s: {tool / base:.2f} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
