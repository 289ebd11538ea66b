"""Sweep over real code: migrate every file of the installed torch and torch_xla packages.

Robustness, not speed: thousands of real files written by others exercise every rule on
code no fixture imagined. For each runtime (``--runtime torch-xla``, then ``torch-tpu``),
each fix mode (safe fixes, then ``--unsafe-fixes``) and each package, the command line runs
as a user would:

    python -m migrate_xla -o OUT/<package> --runtime R [--unsafe-fixes] --format json --exit-zero -j 2 PACKAGE_DIR
    python -m migrate_xla --check --runtime R [--unsafe-fixes] --format json --exit-zero -j 2 OUT/<package>/<changed files>

and the sweep checks that
- no file fails (exit 2) except files that do not parse as Python 3.11 (counted as
  "unparseable" and listed, not failures); an "internal error" is always a failure;
- every written file compiles (a copy left unchanged is byte for byte the original);
- the second run over the output changes nothing and fixes nothing (idempotence; it
  runs on the changed copies, the others being the originals the first run left alone).

It prints counts (files, changed, findings, failures) and lists each failure, with the
diff a second run would make; exit status 1 when anything failed.

    .venv/bin/python benchmarks/sweep.py                      # everything (make sweep)
    .venv/bin/python benchmarks/sweep.py --sample 300         # 300 files spread over the packages
    .venv/bin/python benchmarks/sweep.py --fixes unsafe       # one fix mode only
    .venv/bin/python benchmarks/sweep.py --runtime torch-tpu  # one runtime only
    .venv/bin/python benchmarks/sweep.py --only torch/cuda/amp/grad_scaler.py  # chosen files
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("torch", "torch_xla")
RUNTIMES = ("torch-xla", "torch-tpu")
FIXES = {"safe": [], "unsafe": ["--unsafe-fixes"]}


def mode_flags(mode: str) -> list[str]:
    """The command-line flags of a mode, ``RUNTIME/FIXES`` (``torch-tpu/unsafe``)."""
    runtime, fixes = mode.split("/")
    return ["--runtime", runtime, *FIXES[fixes]]


def package_dir(name: str) -> Path:
    """An installed package's folder, found without importing it (the rewriter never imports torch)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{name} is not installed in this interpreter")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def python_files(root: Path) -> list[Path]:
    """Every .py file under root, sorted, not following links (as the tool walks)."""
    return sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts)


def compiles(path: Path) -> str | None:
    """None when the file compiles as Python (bytes, so a coding cookie counts), else why not."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


@dataclass
class Tally:
    files: int = 0
    changed: int = 0
    findings: int = 0
    fixed: int = 0
    unparseable: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def run_cli(args: list[str], jobs: int) -> dict:
    cmd = [sys.executable, "-m", "migrate_xla", "--format", "json", "--exit-zero", "-j", str(jobs), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode not in (0, 1, 2):  # 2: some file failed; the report says which
        raise SystemExit(f"xla-migrate crashed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(
            f"xla-migrate printed no JSON report (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}"
        ) from None


def sweep_tree(name: str, tree: Path, out: Path, flags: list[str], jobs: int, pool: Pool, tally: Tally) -> None:
    """Migrate ``tree`` into ``out`` and check the three properties; record into ``tally``."""
    first = run_cli(["-o", str(out), *flags, str(tree)], jobs)
    summary = first["summary"]
    tally.files += summary["files"]
    tally.changed += summary["changed"]
    tally.findings += sum(len(f["diagnostics"]) for f in first["files"])
    tally.fixed += summary["fixed"]

    inputs = [Path(f["path"]) for f in first["files"]]
    copies = [out / p.relative_to(tree) for p in inputs]
    original_ok = pool.map(compiles, inputs, chunksize=16)
    broken = {}  # input path -> why the original does not compile
    for path, why in zip(inputs, original_ok):
        if why is not None:
            broken[path] = why
            tally.unparseable.append(f"{name}/{path.relative_to(tree)}: {why}")
    for entry, path, copy in zip(first["files"], inputs, copies):
        where = f"{name}/{path.relative_to(tree)}"
        error = entry.get("error")
        if error is not None and (path not in broken or "internal error" in error):
            tally.failures.append(f"{where}: {error}")
        elif error is None and not copy.is_file():
            tally.failures.append(f"{where}: no copy was written")
        elif error is None and not entry["changed"] and copy.read_bytes() != path.read_bytes():
            tally.failures.append(f"{where}: unchanged, yet the copy differs from the original")
    written = [(p, c) for p, c, e in zip(inputs, copies, first["files"]) if e["changed"] and c.is_file()]
    for (path, _copy), why in zip(written, pool.map(compiles, [c for _, c in written], chunksize=16)):
        if why is not None and path not in broken:
            tally.failures.append(f"{name}/{path.relative_to(tree)}: the written file does not compile: {why}")

    # A copy left unchanged is the original, which the first run already found nothing to
    # change in: the second run needs only the changed copies.
    second = run_cli(["--check", *flags, *(str(c) for _, c in written)], jobs) if written else {"files": []}
    for entry in second["files"]:
        copy = Path(entry["path"])
        where = f"{name}/{copy.relative_to(out)}"
        if tree / copy.relative_to(out) in broken:
            continue
        if entry.get("error") is not None:
            tally.failures.append(f"{where}: second run: {entry['error']}")
        elif entry["changed"] or any(d["fixed"] for d in entry["diagnostics"]):
            diff = subprocess.run(
                [sys.executable, "-m", "migrate_xla", "--diff", *flags, str(copy)],
                cwd=REPO,
                capture_output=True,
                text=True,
            ).stdout
            fixed = sorted({d["code"] for d in entry["diagnostics"] if d["fixed"]})
            tally.failures.append(f"{where}: a second run changes it (fixes {', '.join(fixed)}):\n{diff[:3000]}")


def chosen_files(roots: dict[str, Path], sample: int | None, only: list[str]) -> dict[str, list[Path]] | None:
    """The files a partial sweep takes, by package; None for a full sweep."""
    if only:
        picked: dict[str, list[Path]] = {}
        for rel in only:
            name, _, rest = rel.partition("/")
            if name not in roots or not (roots[name] / rest).is_file():
                sys.exit(f"--only {rel}: no such file in the installed packages ({', '.join(roots)})")
            picked.setdefault(name, []).append(roots[name] / rest)
        return picked
    if sample:
        everything = [(name, p) for name, root in roots.items() for p in python_files(root)]
        step = max(1, len(everything) // sample)
        picked = {}
        for name, path in everything[::step][:sample]:
            picked.setdefault(name, []).append(path)
        return picked
    return None


def sweep(
    roots: dict[str, Path], modes: list[str], jobs: int, workdir: Path, sample: int | None = None, only: list[str] = ()
) -> dict[str, Tally]:
    """Run the sweep; one tally per mode (``torch-xla/safe``: mode_flags)."""
    trees = dict(roots)
    picked = chosen_files(roots, sample, list(only))
    if picked is not None:  # a partial sweep migrates a copy of the chosen files, tree kept
        trees = {}
        for name, paths in picked.items():
            trees[name] = workdir / "input" / name
            for path in paths:
                target = trees[name] / path.relative_to(roots[name])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    tallies = {}
    with Pool(jobs) as pool:
        for mode in modes:
            tally = tallies[mode] = Tally()
            for name, tree in trees.items():
                sweep_tree(name, tree, workdir / mode / name, mode_flags(mode), jobs, pool, tally)
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, help="only N files, spread evenly over the packages")
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="PKG/PATH", help="only these files (torch/nn/functional.py)"
    )
    parser.add_argument(
        "--fixes", choices=["safe", "unsafe", "both"], default="both", help="fix modes to sweep (default both)"
    )
    parser.add_argument(
        "--runtime", choices=[*RUNTIMES, "both"], default="both", help="runtimes to sweep (default both)"
    )
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--keep", type=Path, help="keep the migrated copies in this folder (must not exist)")
    args = parser.parse_args()

    roots = {name: package_dir(name) for name in PACKAGES}
    fixes = list(FIXES) if args.fixes == "both" else [args.fixes]
    runtimes = list(RUNTIMES) if args.runtime == "both" else [args.runtime]
    modes = [f"{runtime}/{fix}" for runtime in runtimes for fix in fixes]
    start = time.perf_counter()
    if args.keep:
        args.keep.mkdir(parents=True)
        tallies = sweep(roots, modes, args.jobs, args.keep, args.sample, args.only)
    else:
        with tempfile.TemporaryDirectory(prefix="xla-migrate-sweep-") as tmp:
            tallies = sweep(roots, modes, args.jobs, Path(tmp), args.sample, args.only)
    print(f"packages: {', '.join(f'{n} ({p})' for n, p in roots.items())}")
    failed = 0
    for mode, tally in tallies.items():
        print(
            f"{mode + ' fixes:':<24} {tally.files} files, {tally.changed} changed, {tally.findings} findings "
            f"({tally.fixed} fixed), {len(tally.unparseable)} unparseable as Python {sys.version_info[0]}.{sys.version_info[1]}, "
            f"{len(tally.failures)} failures"
        )
        for line in tally.unparseable:
            print(f"  unparseable: {line}")
        for line in tally.failures:
            print(f"  FAILURE: {line}")
        failed += len(tally.failures)
    print(f"{time.perf_counter() - start:.0f} s, -j {args.jobs}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
