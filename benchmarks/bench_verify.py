"""Overhead of `xla-migrate verify` against running the two scripts bare.

One run, three measurements, one after the other:
- bare original: ``python mnist_cnn.py --epochs 1 --train-size 320`` on the CPU (the
  example falls back to the CPU without a GPU), 10 training steps and its test pass;
- bare migrated: the migrated copy (``xla-migrate -o``) with the same arguments on CPU
  PJRT;
- verify: ``xla-migrate verify mnist_cnn.py --steps 10 -- --epochs 1 --train-size 320``:
  migration, both runs instrumented side by side, comparison.

Printed: the three wall times and verify / (bare original + bare migrated), the time a
user would spend running both by hand. Target: at most 1.3. Also printed against the
longer bare run alone, since verify runs the two children in parallel.

    .venv/bin/python benchmarks/bench_verify.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "fixtures" / "examples" / "mnist_cnn.py"
ARGS = ["--epochs", "1", "--train-size", "320"]
TARGET = 1.3


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "migrate_xla", "--exit-zero", "-o", tmp, str(SCRIPT)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        migrated = Path(tmp) / SCRIPT.name
        bare_original = timed([sys.executable, str(SCRIPT), *ARGS], env)
        bare_migrated = timed([sys.executable, str(migrated), *ARGS], env)
        verify = timed([sys.executable, "-m", "migrate_xla", "verify", str(SCRIPT), "--steps", "10", "--", *ARGS], env)
    both = bare_original + bare_migrated
    print(f"bare original (cpu):        {bare_original:7.1f} s")
    print(f"bare migrated (CPU PJRT):   {bare_migrated:7.1f} s")
    print(f"xla-migrate verify:         {verify:7.1f} s")
    print(f"verify / (both bare runs):  {verify / both:7.2f}   (target <= {TARGET})")
    print(f"verify / (longer bare run): {verify / max(bare_original, bare_migrated):7.2f}")


if __name__ == "__main__":
    main()
