"""Cost against size: one dense file of N lines, CUDA code in every function.

    .venv/bin/python benchmarks/bench_dense.py
    .venv/bin/python benchmarks/bench_dense.py --sizes 12500,25000,50000 --keep
    .venv/bin/python benchmarks/bench_dense.py --tree /tmp/before   # another checkout's code

A file of many small functions (a model moved with ``.cuda()``, ``torch.device("cuda")``,
an optimizer loop over a DataLoader with ``loss.backward(); optimizer.step()``, a
``torch.cuda.amp.autocast()`` block, ``loss.item()``, ``torch.cuda.synchronize()``, a
pinned-memory DataLoader, CUDA memory queries, data-dependent shapes...) is generated
in a temporary folder at each size, and ``xla-migrate --check`` and ``xla-migrate -o
DIR`` each run on it in a child process. For each size and command it prints the wall
and CPU time and the peak memory (``resource.getrusage(RUSAGE_CHILDREN)``: each command
runs under a fresh Python that starts it, so the figures are that command's own), CPU
seconds per 1,000 lines, and MiB per 1,000 lines above the start-up's peak (a 200-line
file's); then, per command, the ratio of the per-1,000-lines cost at the largest size to
the smallest: 1.0 when the cost is linear in the file. CPU time is the figure to read on
a shared machine: wall time counts the other processes too. ``--plain K`` puts K
functions without CUDA after each CUDA one, so that the engine parses a slice
(migrate_xla/engine/slicing.py).

Each timed command is its own ``python -c`` (the console script's code, with the
checkout's package), with bytecode caching on in a temporary folder, as an installed tool
runs. ``--runs N`` takes the best of N runs of each command.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZES = (12_500, 25_000, 50_000)

HEADER = '''"""A dense GPU training module: every function has CUDA code."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

'''

# Small functions, each with code the rules act on; {i} makes every name its own.
FUNCTIONS = (
    """
def train_{i}(model, loader, epochs=1, lr=0.01):
    device = torch.device("cuda")
    model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            print(f"epoch {{epoch}} loss {{loss.item():.4f}}")
    torch.cuda.synchronize()
    return model
""",
    """
def train_amp_{i}(model, loader, optimizer):
    model.cuda()
    model.train()
    for step, (data, target) in enumerate(loader):
        data = data.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            output = model(data)
            loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(step, loss.item())
    return model
""",
    """
def make_loader_{i}(n=64, batch_size=8):
    images = torch.randn(n, 1, 28, 28)
    labels = torch.randint(0, 10, (n,))
    dataset = TensorDataset(images, labels)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=True)
""",
    """
@torch.no_grad()
def evaluate_{i}(model, loader, device="cuda"):
    model.eval()
    correct = total = 0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        pred = model(data).argmax(dim=1)
        correct += (pred == target).sum().item()
        total += target.numel()
    return correct / max(1, total)
""",
    """
def benchmark_{i}(model, batch_size=64, steps=20):
    x = torch.randn(batch_size, 1, 28, 28, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        model(x)
    torch.cuda.synchronize()
    print(torch.cuda.max_memory_allocated() / 2**20, "MiB")
    torch.cuda.empty_cache()
""",
    """
def setup_{i}(seed, deterministic=False):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cudnn.benchmark = not deterministic
    if torch.cuda.is_available():
        print(torch.cuda.get_device_name(0))
""",
    """
def select_{i}(scores, labels, threshold=0.5):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    scores, labels = scores.to(device), labels.to(device)
    kept = scores[scores > threshold]
    if kept.sum() > 0:
        print(kept.mean().item())
    return torch.nonzero(labels).to(device)
""",
)


# With --plain K, K of these follow each CUDA function: code no rule wakes on, which the
# engine leaves out of the parse (migrate_xla/engine/slicing.py).
PLAIN = """
def helper_{i}(values, scale=2):
    total = 0
    for value in values:
        total += value * scale
    return total
"""


def dense_source(lines: int, plain: int = 0) -> str:
    """A module of about ``lines`` lines (never fewer) of small CUDA functions, each
    followed by ``plain`` functions without CUDA."""
    parts = [HEADER]
    count = HEADER.count("\n")
    i = 0
    while count < lines:
        part = FUNCTIONS[i % len(FUNCTIONS)].format(i=i)
        part += "".join(PLAIN.format(i=f"{i}_{k}") for k in range(plain))
        parts.append(part)
        count += part.count("\n")
        i += 1
    return "".join(parts)


def timed(command: list[str], env: dict, cwd: Path) -> dict:
    """Wall and CPU seconds and peak memory (MiB) of ``command``, run under a child Python
    of its own so that RUSAGE_CHILDREN is this command's alone, not an earlier one's; with
    its exit code, stderr's end, and the summary of its JSON report. It runs in ``cwd``, the
    checkout whose code is timed: ``python -c`` puts its working folder first on sys.path."""
    probe = (
        "import json, resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - start\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "try:\n"
        "    summary = json.loads(done.stdout)['summary']\n"
        "except (ValueError, KeyError):\n"
        "    summary = {}\n"
        "print(json.dumps({'wall': wall, 'cpu': usage.ru_utime + usage.ru_stime, 'peak': usage.ru_maxrss / 1024,\n"
        "                  'rc': done.returncode, 'summary': summary, 'stderr': done.stderr[-4000:]}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, env=env, cwd=cwd, check=True
    )
    return json.loads(out.stdout)


TOOL = "import sys; from migrate_xla.app.cli import main; sys.exit(main())"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated line counts")
    parser.add_argument("--runs", type=int, default=1, help="best of N runs of each command (least CPU time)")
    parser.add_argument("--plain", type=int, default=0, help="plain functions after each CUDA one (default 0)")
    parser.add_argument("--tree", default=str(REPO), help="the checkout whose migrate_xla runs (default: this one)")
    parser.add_argument("--check-only", action="store_true", help="time --check only, not the write")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print it")
    args = parser.parse_args()
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())

    work = Path(tempfile.mkdtemp(prefix="bench_dense_"))
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    tree = Path(args.tree).resolve()
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    modes = ["check"] if args.check_only else ["check", "write"]
    results: dict[str, dict[int, dict]] = {mode: {} for mode in modes}
    package = subprocess.run(
        [sys.executable, "-c", "import migrate_xla; print(migrate_xla.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    ).stdout.strip()
    print(f"code: {Path(package).parent}; one process (-j 1); --plain {args.plain}; best of {args.runs}")
    try:
        # one warm-up run, so that .pyc files and the page cache are warm for the first size
        warm = work / "warm.py"
        warm.write_text(dense_source(200))
        timed([sys.executable, "-c", TOOL, "--check", "--exit-zero", str(warm)], env, tree)
        base = timed([sys.executable, "-c", TOOL, "--check", "--exit-zero", str(warm)], env, tree)["peak"]
        print(f"start-up peak (a 200-line file): {base:.0f} MiB")
        print(
            f"{'lines':>7} {'command':<7} {'wall s':>8} {'CPU s':>8} {'CPU s/1k':>9} {'peak MiB':>9} {'MiB/1k':>7} {'findings':>9}"
        )
        for size in sizes:
            path = work / f"dense_{size}.py"
            text = dense_source(size, args.plain)
            path.write_text(text)
            lines = text.count("\n")
            for mode in modes:
                where = ["--check"] if mode == "check" else ["-o", str(work / f"out_{size}")]
                command = [sys.executable, "-c", TOOL, *where, "--exit-zero", "--format", "json", "-j", "1", str(path)]
                best = None
                for _ in range(args.runs):
                    run = timed(command, env, tree)
                    if run["rc"] != 0:
                        print(run["stderr"], file=sys.stderr)
                        raise SystemExit(f"xla-migrate {mode} failed on {lines} lines (exit {run['rc']})")
                    if best is None or run["cpu"] < best["cpu"]:
                        best = run
                results[mode][lines] = best
                summary = best["summary"]
                findings = summary.get("fixed", 0) + summary.get("remaining", 0) if summary else "?"
                print(
                    f"{lines:>7} {mode:<7} {best['wall']:>8.2f} {best['cpu']:>8.2f} {best['cpu'] / lines * 1000:>9.3f}"
                    f" {best['peak']:>9.0f} {(best['peak'] - base) / lines * 1000:>7.1f} {findings!s:>9}"
                )
        for mode in modes:
            runs = results[mode]
            if len(runs) > 1:
                small, large = min(runs), max(runs)
                for run in runs.values():
                    run["memory"] = run["peak"] - base
                per = {key: runs[large][key] / large / (runs[small][key] / small) for key in ("wall", "cpu", "memory")}
                print(
                    f"{mode}: cost per 1,000 lines at {large} / at {small}: CPU {per['cpu']:.2f}, wall {per['wall']:.2f},"
                    f" memory above start-up {per['memory']:.2f} (1.0: linear)"
                )
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
