"""Throughput: `xla-migrate --check -j 2` over big real corpora, against LibCST itself.

Two corpora, both from the torch package installed in this environment: the whole
package (about 2,000 files, almost a million lines: real, varied PyTorch code, full of
`cuda`, `device(` and `load(`, so the pre-filter lets half of it through and the rules
really run), and its CUDA-heavy part, the `nn`, `optim`, `utils/data`, `amp`, `cuda` and
`distributed` packages (543 files), where most files wake rules.

Both sides are timed in the same run, one after the other, as child processes started
the same way, so that interpreter start-up and imports count on both sides:

- xla-migrate: ``python -m migrate_xla --check -j 2 --exit-zero --format json FOLDERS``
  (JSON goes to a temporary file: it is read back to check how many files the tool
  processed, changed and flagged);
- baseline: read + ``libcst.parse_module`` + ``.code`` of the same files in a
  ``multiprocessing.Pool(2)`` with the engine's chunk size: the least any LibCST tool
  that parses every file and generates code could do.

Both run with bytecode cached (``PYTHONPYCACHEPREFIX``, as in bench_startup.py: an
installed tool has its .pyc files; with ``PYTHONDONTWRITEBYTECODE`` set, as in this
sandbox, every worker would compile migrate_xla and codemods again), after one untimed
run that writes it.

The machine this was written on has two cores shared with other work, so absolute
times are noisy; the ratio xla-migrate / baseline is the number to read. Targets: <= 0.9
on the whole package, <= 1.0 on the CUDA-heavy part (the pre-filter should pay for the
rules).

    .venv/bin/python benchmarks/bench_corpus.py                       # both corpora
    .venv/bin/python benchmarks/bench_corpus.py --corpus cuda-heavy   # one of them
    .venv/bin/python benchmarks/bench_corpus.py --limit 200           # quick check
    .venv/bin/python benchmarks/bench_corpus.py --root DIR            # another tree
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_startup import bench_env

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.0  # a tree given with --root
JOBS = 2

# The corpora, as folders of the installed torch package, and the target of each: the whole
# package, where half the files wake no rule, and its CUDA-heavy part (543 files), where
# most do and the rules' cost shows.
CORPORA = {
    "torch": (["."], 0.9),
    "cuda-heavy": (["nn", "optim", "utils/data", "amp", "cuda", "distributed"], 1.0),
}

# Folders the tool never walks into (migrate_xla.sources.discovery.DEFAULT_EXCLUDES); repeated
# here so the baseline's file list does not come from the code under test.
EXCLUDES = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "__pypackages__",
    "site-packages",
    ".eggs",
}

# The baseline, run as its own process: argv[1] is a file holding one path a line.
BASELINE = r"""
import io, sys, tokenize
from multiprocessing import Pool
import libcst

def one(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        return libcst.parse_module(text).code == text
    except Exception:
        return None

if __name__ == "__main__":
    paths = open(sys.argv[1], encoding="utf-8").read().splitlines()
    jobs = int(sys.argv[2])
    chunk = max(1, min(8, len(paths) // (jobs * 8)))  # as migrate_xla.app.run.migrate_files
    pool = Pool(jobs)
    results = pool.map(one, paths, chunksize=chunk)
    pool.close()
    pool.join()
    print(sum(r is True for r in results), sum(r is False for r in results), sum(r is None for r in results))
"""


def torch_dir() -> Path:
    """The installed torch package, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed in this interpreter; pass --root DIR")
    return Path(list(spec.submodule_search_locations)[0])


def walk(root: Path) -> list[Path]:
    """The .py files under root in the tool's order (sorted names, no symlinks, no excluded folders)."""
    out: list[Path] = []

    def visit(folder: Path) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in EXCLUDES:
                    visit(Path(entry.path))
            elif entry.name.endswith(".py"):
                out.append(Path(entry.path))

    visit(root)
    return out


def count_lines(files: list[Path]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


def prefilter_passes(files: list[Path]) -> tuple[int, int, float]:
    """How many files wake an enabled rule (its TRIGGERS and REQUIRES occur), so get
    parsed; how many of those are parsed as a slice (migrate_xla/engine/slicing.py); and the
    share of the corpus's characters that is parsed (a slice's own text for those)."""
    sys.path.insert(0, str(REPO))
    from migrate_xla.app import run
    from migrate_xla.engine import pipeline, prefilter
    from migrate_xla.sources.reading import read_source
    from migrate_xla.sources.source import SourceError

    settings = run.options_for()
    rules = run.enabled_rules(settings)  # the rule classes: the slicer asks them whether they need the whole file
    passed = sliced = parsed = total = 0
    for path in files:
        try:
            text = read_source(path).text
        except SourceError:
            continue
        total += len(text)
        woken = prefilter.woken(rules, text)
        if woken:
            passed += 1
            piece = pipeline._slice(text, woken, settings)
            sliced += piece is not None
            parsed += len(text if piece is None else piece.text)
    return passed, sliced, parsed / max(1, total)


# The environment of the timed commands: bytecode cached, as for an installed tool
# (bench_startup.bench_env); set by main().
ENV: dict[str, str] = dict(os.environ)


def timed(cmd: list[str], **kwargs) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run cmd; its wall time and the CPU time (user + system) of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=ENV, **kwargs)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def run_cli(paths: list[str], workdir: Path) -> tuple[float, float, dict]:
    out = workdir / "cli.json"
    cmd = [sys.executable, "-m", "migrate_xla", "--check", "-j", str(JOBS), "--exit-zero", "--format", "json", *paths]
    with open(out, "wb") as stdout:
        wall, cpu, proc = timed(cmd, cwd=REPO, stdout=stdout, stderr=subprocess.PIPE)
    if proc.returncode not in (0, 1):
        sys.exit(f"xla-migrate failed (exit {proc.returncode}):\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return wall, cpu, json.loads(out.read_text(encoding="utf-8"))


def run_baseline(files: list[Path], workdir: Path) -> tuple[float, float, tuple[int, int, int]]:
    listing = workdir / "files.txt"
    listing.write_text("\n".join(map(str, files)) + "\n", encoding="utf-8")
    script = workdir / "baseline.py"
    script.write_text(BASELINE, encoding="utf-8")
    wall, cpu, proc = timed([sys.executable, str(script), str(listing), str(JOBS)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"baseline failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    same, differ, failed = map(int, proc.stdout.split())
    return wall, cpu, (same, differ, failed)


def bench(name: str, roots: list[Path], target: float, limit: int | None, repeat: int) -> bool:
    """Time one corpus (the .py files under ``roots``) both ways and print the ratio; True when it meets ``target``."""
    files = [path for root in roots for path in walk(root)]
    if limit:
        files = files[:limit]
    # A full corpus is given as its folders (the tool walks them, as a user would run it);
    # a --limit subset is given file by file.
    cli_paths = [str(root) for root in roots] if not limit else [str(p) for p in files]
    lines = count_lines(files)
    passed, sliced, parsed = prefilter_passes(files)
    print(f"corpus:      {name}: {', '.join(map(str, roots))}")
    print(f"files:       {len(files)}   lines: {lines}   jobs: {JOBS}   cpus: {os.cpu_count()}")
    print(
        f"pre-filter:  {passed} of {len(files)} files match a trigger and get parsed ({passed / max(1, len(files)):.0%}), "
        f"{sliced} of them as a slice; {parsed:.0%} of the corpus's characters are parsed"
    )

    cli_runs, base_runs = [], []  # (wall, cpu) per run
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        workdir = Path(tmp)
        for _ in range(max(1, repeat)):
            wall, cpu, (same, differ, failed) = run_baseline(files, workdir)
            base_runs.append((wall, cpu))
            wall, cpu, report = run_cli(cli_paths, workdir)
            cli_runs.append((wall, cpu))

    summary = report["summary"]
    flagged = sum(1 for f in report["files"] if any(not d["fixed"] for d in f["diagnostics"]))
    base_wall, base_cpu = min(w for w, _ in base_runs), min(c for _, c in base_runs)
    cli_wall, cli_cpu = min(w for w, _ in cli_runs), min(c for _, c in cli_runs)
    print(
        f"baseline:    {base_wall:7.2f} s wall {base_cpu:7.2f} s cpu  (LibCST parse + codegen, Pool({JOBS}): "
        f"{same} round-trip, {differ} differ, {failed} failed to parse)"
    )
    print(
        f"xla-migrate: {cli_wall:7.2f} s wall {cli_cpu:7.2f} s cpu  (--check -j {JOBS}: processed {summary['files']} files, "
        f"{summary['changed']} would change, {flagged} with findings left for a person, {summary['errors']} errors)"
    )
    if len(cli_runs) > 1:
        print(
            f"  all runs (wall): baseline {', '.join(f'{w:.2f}' for w, _ in base_runs)}; "
            f"xla-migrate {', '.join(f'{w:.2f}' for w, _ in cli_runs)}"
        )
        # Each run of the tool against the baseline's run just before it: the machine's
        # speed drifts from minute to minute, and best-of picks each side's luckiest run apart.
        paired = sorted(c / b for (c, _), (b, _) in zip(cli_runs, base_runs))
        paired_cpu = sorted(c / b for (_, c), (_, b) in zip(cli_runs, base_runs))
        print(
            f"  paired runs (each against the baseline run before it): median {statistics.median(paired):.2f} "
            f"wall, {statistics.median(paired_cpu):.2f} cpu; wall from {paired[0]:.2f} to {paired[-1]:.2f}"
        )
    print(f"  findings by code: {summary['by_code']}")
    if summary["files"] != len(files):
        print(f"WARNING: xla-migrate processed {summary['files']} files, the baseline {len(files)}")
    else:
        print(f"  file count check: both processed {len(files)} files")
    ratio = cli_wall / base_wall
    verdict = "OK" if ratio <= target else "MISSED"
    print(
        f"ratio xla-migrate / baseline ({name}): {ratio:.2f} wall, {cli_cpu / base_cpu:.2f} cpu  "
        f"(target <= {target} wall: {verdict})"
    )
    return ratio <= target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        choices=[*CORPORA, "both"],
        default="both",
        help="torch: the whole package; cuda-heavy: its nn, optim, utils/data, amp, cuda and "
        "distributed packages; both (the default), one after the other",
    )
    parser.add_argument("--root", type=Path, help="another tree to migrate instead (target 1.0)")
    parser.add_argument("--limit", type=int, help="only the first N files (quick check); default: all")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternating; the best of each counts")
    args = parser.parse_args()

    global ENV
    pycache = tempfile.TemporaryDirectory(prefix="bench-corpus-pycache-")
    ENV = bench_env(Path(pycache.name))
    # one untimed run that imports everything, so that both sides start with bytecode cached
    timed(
        [
            sys.executable,
            "-c",
            "import libcst, migrate_xla.app.cli, migrate_xla.engine.pipeline as e; e.registry.all_rules()",
        ],
        cwd=REPO,
    )
    if args.root:
        return 0 if bench(str(args.root), [args.root.resolve()], TARGET, args.limit, args.repeat) else 1
    torch = torch_dir().resolve()
    names = list(CORPORA) if args.corpus == "both" else [args.corpus]
    met = []
    for number, name in enumerate(names):
        if number:
            print()
        parts, target = CORPORA[name]
        met.append(bench(name, [torch / part for part in parts], target, args.limit, args.repeat))
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
