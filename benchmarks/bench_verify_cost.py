"""What verify costs against the two runs it compares, over a corpus of scripts (issue 39).

For each script: the wall time of ``xla-migrate verify --steps N`` as a user runs it (float64
where it is cheap, the twin and the float64 decision where it is not, the TPU report), and of the
two runs as written alone, side by side as verify runs them (``--precision native
--no-tpu-report``: the original and the migration, instrumented only to record the losses and to
stop at ``--steps``). Printed: a row a script with both times and their ratio, then the largest
and the median ratio against the targets (3 and 1.5), measured in this one run.

The corpus is every example of fixtures/examples (with its ``# verify-args`` and
``# verify-unsafe-fixes``), and any scripts given with ``--script 'PATH ARGS...'``.

    .venv/bin/python benchmarks/bench_verify_cost.py [--steps 8] [--only mnist_cnn,dcgan] [--script 'tests/scripts/resnet18_generated.py --image-size 64']
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "fixtures" / "examples"
TARGETS = {"max": 3.0, "median": 1.5}


def example_cases() -> list[tuple[str, Path, list[str], list[str]]]:
    """(name, script, verify options, script arguments) for every bundled example."""
    cases = []
    for script in sorted(EXAMPLES.glob("*.py")):
        text = script.read_text()
        found = re.search(r"^# verify-args: (.*)$", text, re.MULTILINE)
        options = ["--unsafe-fixes"] if re.search(r"^# verify-unsafe-fixes$", text, re.MULTILINE) else []
        cases.append((script.stem, script, options, shlex.split(found.group(1)) if found else []))
    return cases


def timed_verify(script: Path, options: list[str], args: list[str], steps: int, folder: Path) -> tuple[float, dict]:
    report = folder / "verify.json"
    command = [sys.executable, "-m", "migrate_xla", "verify", "--steps", str(steps), "--json", str(report)]
    started = time.perf_counter()
    subprocess.run(
        [*command, *options, str(script), "--", *args],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    return wall, json.loads(report.read_text()) if report.is_file() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--only", help="example names, comma-separated")
    parser.add_argument("--script", action="append", default=[], help="'PATH ARGS...' of another script")
    parser.add_argument("--no-examples", action="store_true", help="only the --script ones")
    given = parser.parse_args()
    cases = [] if given.no_examples else example_cases()
    if given.only:
        wanted = set(given.only.split(","))
        cases = [case for case in cases if case[0] in wanted]
    for spec in given.script:
        path, *args = shlex.split(spec)
        cases.append((Path(path).stem, Path(path).resolve(), [], args))
    ratios = []
    print(f"{'script':<28} {'verify s':>9} {'as written s':>13} {'ratio':>6}  verdict (how decided)")
    for name, script, options, args in cases:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            full, report = timed_verify(script, options, args, given.steps, folder)
            bare, _ = timed_verify(
                script, [*options, "--precision", "native", "--no-tpu-report"], args, given.steps, folder
            )
        ratio = full / bare
        ratios.append(ratio)
        source = (report.get("tolerance") or {}).get("source", "")
        how = "float64" if source.startswith("float64") else source.split(":")[0][:30]
        print(f"{name:<28} {full:>9.1f} {bare:>13.1f} {ratio:>6.2f}  {report.get('verdict', 'no report')} ({how})")
    if not ratios:
        return
    largest, median = max(ratios), statistics.median(ratios)
    for label, value in (("max", largest), ("median", median)):
        verdict = "met" if value <= TARGETS[label] else "MISSED"
        print(f"{label} ratio {value:.2f} over {len(ratios)} scripts (target <= {TARGETS[label]:g}: {verdict})")


if __name__ == "__main__":
    main()
