"""Overhead of `xla-migrate verify` against running the two scripts bare.

Two models, each measured three ways, one after the other:
- bare original: the script on the CPU (it falls back to the CPU without a GPU);
- bare migrated: the migrated copy (``xla-migrate -o``) with the same arguments on CPU PJRT;
- verify: ``xla-migrate verify SCRIPT --steps 10 -- ARGS``: migration, both runs instrumented
  side by side, comparison (float64 where it is cheap, --precision auto).

The models: the bundled MNIST CNN (``fixtures/examples/mnist_cnn.py --epochs 1 --train-size
320``: 10 steps and a test pass; verified in float64) and a ResNet-18 on generated data
(``tests/scripts/resnet18_generated.py``: torchvision's resnet18 written out, batch 8, 224x224, 10
steps; 14.5 G multiply-adds in convolutions a forward pass, so float64 would cost over 900 s
on 2 cores: verify runs it as written, with a twin of the reference to calibrate the
tolerance, compare.py). ``--only resnet18`` or ``--only mnist`` measures one.

Printed for each: the three wall times and verify / (bare original + bare migrated), the
time a user would spend running both by hand. Target: at most 1.3. Also printed against the
longer bare run alone, since verify runs the children in parallel.

    .venv/bin/python benchmarks/bench_verify.py [--only mnist|resnet18]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = {
    "mnist": (REPO / "fixtures" / "examples" / "mnist_cnn.py", ["--epochs", "1", "--train-size", "320"]),
    "resnet18": (REPO / "tests" / "scripts" / "resnet18_generated.py", ["--steps", "10"]),
}
TARGET = 1.3


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(name: str, script: Path, args: list[str]) -> None:
    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "migrate_xla", "--exit-zero", "-o", tmp, str(script)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        migrated = Path(tmp) / script.name
        bare_original = timed([sys.executable, str(script), *args], env)
        bare_migrated = timed([sys.executable, str(migrated), *args], env)
        verify = timed(
            [
                sys.executable,
                "-m",
                "migrate_xla",
                "verify",
                str(script),
                "--steps",
                "10",
                "--timeout",
                "1800",
                "--",
                *args,
            ],
            {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))},
        )
    both = bare_original + bare_migrated
    print(f"{name}: {script.relative_to(REPO)} {' '.join(args)}")
    print(f"  bare original (cpu):        {bare_original:7.1f} s")
    print(f"  bare migrated (CPU PJRT):   {bare_migrated:7.1f} s")
    print(f"  xla-migrate verify:         {verify:7.1f} s")
    print(f"  verify / (both bare runs):  {verify / both:7.2f}   (target <= {TARGET})")
    print(f"  verify / (longer bare run): {verify / max(bare_original, bare_migrated):7.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=sorted(MODELS))
    chosen = parser.parse_args().only
    for name, (script, args) in MODELS.items():
        if chosen in (None, name):
            measure(name, script, args)
    print("rerun: .venv/bin/python benchmarks/bench_verify.py" + (f" --only {chosen}" if chosen else ""))


if __name__ == "__main__":
    main()
