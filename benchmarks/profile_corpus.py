"""Where the corpus time goes: CPU time of each phase of the engine (as engine._migrate
runs them, a slice first where the engine would take one), in-process and
single-threaded, on every Nth file of the installed torch package, against LibCST
parse + codegen of the same files (the baseline of bench_corpus.py).

    .venv/bin/python benchmarks/profile_corpus.py        # every 8th file (253 files)
    .venv/bin/python benchmarks/profile_corpus.py 4      # every 4th
    .venv/bin/python benchmarks/profile_corpus.py 0      # the first 400 (bench_corpus.py --limit 400)
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import libcst as cst  # noqa: E402

from bench_corpus import torch_dir, walk  # noqa: E402
from migrate_xla import engine, imports  # noqa: E402
from migrate_xla.rule import FileContext, WholeModuleNeeded  # noqa: E402
from migrate_xla.sources import read_source  # noqa: E402
from migrate_xla.tree import codegen  # noqa: E402

PHASES = ("read", "pre-filter", "slice", "parse", "rules", "imports", "positions", "codegen", "compile")


def main() -> int:
    step = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    files = walk(torch_dir().resolve())
    files = files[:400] if step == 0 else files[::step]
    options = engine.options_for()
    spent = dict.fromkeys((*PHASES, "baseline parse", "baseline codegen"), 0.0)
    parsed = sliced = fell_back = 0
    for path in files:
        clock = time.process_time()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.process_time()
            spent[phase] += now - clock
            clock = now

        text = read_source(path).text
        lap("read")
        baseline = cst.parse_module(text)
        lap("baseline parse")
        baseline.code
        lap("baseline codegen")
        triggered = engine._triggered(options.rules, text)
        lap("pre-filter")
        if not triggered:
            continue
        parsed += 1
        piece = engine._slice(text, triggered)
        lap("slice")
        sliced += piece is not None
        for attempt in (piece, None) if piece is not None else (None,):
            try:
                source = text if attempt is None else attempt.text
                module = cst.parse_module(source)
                lap("parse")
                ctx = FileContext(sliced=attempt is not None, source=source)
                new = engine.RuleRunner(ctx, [rule(ctx) for rule in triggered], attempt).run(module)
                lap("rules")
                whole = str if attempt is None else attempt.splice
                elsewhere = Counter if attempt is None else attempt.name_uses
                new = imports.apply_imports(new, ctx.imports_to_add, ctx.imports_to_remove, elsewhere)
                lap("imports")
                engine._positioned(module, ctx, None if attempt is None else attempt.line)
                lap("positions")
                new_text = text if new is module else whole(codegen(new))
                lap("codegen")
                if new_text != text:
                    compile(new_text, str(path), "exec", dont_inherit=True)
                lap("compile")
                break
            except WholeModuleNeeded:
                lap("rules")
                fell_back += 1
    base = spent["baseline parse"] + spent["baseline codegen"]
    print(
        f"{len(files)} files, {parsed} parsed by the engine ({sliced} as a slice, {fell_back} of them again whole); "
        f"CPU seconds and share of the baseline ({base:.2f} s)"
    )
    for phase, seconds in spent.items():
        print(f"  {phase:17s} {seconds:7.2f} s  {seconds / base:5.2f}")
    tool = sum(spent[p] for p in PHASES)
    print(f"engine {tool:.2f} s: {tool / base:.2f} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
