"""What the TPU report costs `xla-migrate verify` (docs/tpu_performance.md; target: at most 10%).

For each of the three examples the report was built on (a small GPT, a CNN, an LSTM, from
fixtures/examples/), `xla-migrate verify SCRIPT --steps 8 --json r.json` runs once; the
report's own account of its cost (``tpu_report.cost_s``: the capture in the migrated run,
its lowerings of the step's graphs and its bookkeeping of the window's calls; reading the
graphs; the analysis) is set against verify's wall time, measured in the same run:

    cost ratio = (capture + read + analysis) / verify's wall time

The capture also records the Python stack of each traced operation in the steps around
the window (torch_xla's IR debugging), which no timer sees: ``--ab`` also runs verify with
``--no-tpu-report`` and prints the ratios of the two wall times and of the CPU time of their
processes (on a shared machine single runs vary by 20% and more: those are the noisier
figures).

    .venv/bin/python benchmarks/bench_tpu_report.py [--ab] [--only gpt|cnn|lstm]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "fixtures" / "examples"
MODELS = {
    "gpt": (EXAMPLES / "tiny_gpt.py", []),
    "cnn": (EXAMPLES / "mnist_cnn.py", []),
    "lstm": (EXAMPLES / "word_lm.py", ["--cuda", "--bptt", "4", "--nhid", "16", "--emsize", "16"]),
}
STEPS = 8
TARGET = 0.10


def verify(script: Path, args: list[str], folder: Path, *options: str) -> tuple[float, float, dict]:
    """One `xla-migrate verify` run in ``folder``: its wall time, the CPU time of its processes
    (less sensitive to other work on the machine) and its JSON report."""
    report = folder / "r.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "migrate_xla", "verify", str(script), "--steps", str(STEPS)]
    command += [*options, "--json", str(report), "--", *args]
    started, cpu = time.perf_counter(), _children_cpu()
    subprocess.run(command, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu, json.loads(report.read_text())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, script: Path, args: list[str], ab: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu, result = verify(script, args, Path(tmp))
        report = result["tpu_report"]
        cost = report.get("cost_s") or {}
        spent = sum(cost.values())
        print(f"{name}: {script.relative_to(REPO)} {' '.join(args)} (verdict {result['verdict']})")
        print(f"  verify:                 {wall:7.1f} s ({cpu:.1f} s of CPU)")
        print(
            f"  the TPU report:         {spent:7.2f} s (capture {cost.get('capture', 0):.2f}, read "
            f"{cost.get('read', 0):.3f}, analysis {cost.get('analysis', 0):.3f})"
        )
        print(f"  cost ratio:             {spent / wall:7.3f}   (target <= {TARGET})")
        if ab:
            bare, bare_cpu, _ = verify(script, args, Path(tmp), "--no-tpu-report")
            print(
                f"  verify --no-tpu-report: {bare:7.1f} s ({bare_cpu:.1f} s of CPU); with / without: wall "
                f"{wall / bare:.3f}, CPU {cpu / bare_cpu:.3f}",
                flush=True,
            )
        return spent / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=sorted(MODELS))
    parser.add_argument("--ab", action="store_true", help="also run verify without the report and compare")
    options = parser.parse_args()
    ratios = [measure(name, *MODELS[name], options.ab) for name in MODELS if options.only in (None, name)]
    print(f"largest cost ratio: {max(ratios):.3f} (target <= {TARGET})")
    print(
        "rerun: .venv/bin/python benchmarks/bench_tpu_report.py" + (f" --only {options.only}" if options.only else "")
    )


if __name__ == "__main__":
    main()
