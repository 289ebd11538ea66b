"""Two settings of the engine against each other, in one process, file by file: each file
of a corpus is migrated under setting A and under setting B back to back (the order
alternating from file to file), and the CPU time of each is summed by phase. On this
shared, noisy machine that is the steadiest comparison there is: A against itself reads
0.995 to 1.000, where two runs of bench_corpus.py can differ by 20%. It also checks that
both settings give the same output (new text and findings) for every file.

A setting is Python run before each file, with ``run``, ``pipeline`` (the engine's) and
``slicing`` in scope:

    .venv/bin/python benchmarks/ab_engine.py cuda-heavy 1 "pipeline.SLICE_FROM = 4000" "pipeline.SLICE_FROM = 2000"
    .venv/bin/python benchmarks/ab_engine.py torch 3 "pipeline.SLICE_FROM = 4000" "pipeline.SLICE_FROM = 2000"

(arguments: corpus, every Nth file, setting A, setting B, and optionally the rounds).
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_corpus import CORPORA, torch_dir, walk  # noqa: E402

from migrate_xla.app import run  # noqa: E402
from migrate_xla.engine import (
    pipeline,  # noqa: E402
    slicing,
)
from migrate_xla.rule.findings import MigrationError  # noqa: E402
from migrate_xla.sources.reading import read_source  # noqa: E402


def main() -> int:
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    corpus, step, settings = sys.argv[1], int(sys.argv[2]), sys.argv[3:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    torch = torch_dir().resolve()
    files = [path for part in CORPORA[corpus][0] for path in walk(torch / part)][::step]
    texts = [(read_source(path).text, str(path)) for path in files]
    setups = [compile(setting, f"setting {name}", "exec") for setting, name in zip(settings, "AB")]
    scope = {"run": run, "pipeline": pipeline, "slicing": slicing}
    options = run.options_for()
    spent: list[Counter] = [Counter(), Counter()]
    outputs: list[list] = [[], []]
    gc.disable()  # as in a run: the cyclic collector off, one collection every COLLECT_EVERY files
    for round_ in range(rounds):
        for number, (text, name) in enumerate(texts):
            for side in (0, 1) if (number + round_) % 2 == 0 else (1, 0):
                exec(setups[side], scope)
                clock = time.process_time()

                def lap(phase: str, side: int = side) -> None:
                    nonlocal clock
                    now = time.process_time()
                    spent[side][phase] += now - clock
                    clock = now

                try:
                    result = run.migrate_code(text, options, name, lap)
                except MigrationError as exc:
                    result = str(exc)
                if not round_:
                    outputs[side].append(result)
            if number % run.COLLECT_EVERY == 0:
                gc.collect()
    print(f"{len(files)} files of {corpus}, {rounds} round(s); CPU seconds by phase, A then B")
    for phase in dict.fromkeys([*spent[0], *spent[1]]):
        print(f"  {phase:17s} {spent[0][phase]:7.2f} {spent[1][phase]:7.2f}")
    a, b = sum(spent[0].values()), sum(spent[1].values())
    same = outputs[0] == outputs[1]
    print(f"A {a:.2f} s, B {b:.2f} s: B / A = {b / a:.3f}; the same output for every file: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
