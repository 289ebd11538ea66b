"""Latency: `xla-migrate --check FILE` as a pre-commit hook runs it, on one file.

This is what a pre-commit hook pays on every commit, so it is mostly interpreter
start-up and imports. Two files, each against the least a tool could do with it:

- a file that wakes no rule (the standard library's ``colorsys.py``: no GPU code, as
  most files of most commits): nothing needs LibCST or the rules, only the pre-filter's
  index (migrate_xla/generated/rule_index.py). Baseline: ``python -c "import click"``, the CLI
  framework alone. Target: xla-migrate / baseline <= 1.3.
- a plain file that calls ``json.load`` (a project's config loader): before the
  pre-filter's gate (prefilter.GATE: no rule wakes in a file that names neither torch,
  CUDA nor NVIDIA's libraries) its ``load(`` woke XLA108 and paid for LibCST and the
  rules, about 6x the baseline. Same baseline and target.
- a ~300-line GPU training script that wakes most rules. Baseline: the least a LibCST
  tool with a click CLI could do on it,
  ``python -c "import libcst, click; libcst.parse_module(open(F).read())"``.
  Target: <= 1.5.

The tool runs as the ``xla-migrate`` console script does (``from migrate_xla.app.cli import
main; sys.exit(main())``, here with ``python -c`` so that the checkout's code runs).
Each pair of commands runs RUNS times, alternating (after one warm-up each, so that
.pyc files and the page cache are warm on both sides); the medians are compared.

It also checks that the rewriter never imports torch (design.md: the hook must start
fast and install light), and LibCST only for the file that wakes rules: the check runs
in-process through click, then ``sys.modules`` is read (and how many rule modules it
imported: those of the rules the file wakes). It ends with each figure against its
target, met or MISSED, and the load average, since a busy machine stretches the ratios.

    .venv/bin/python benchmarks/bench_startup.py
    .venv/bin/python benchmarks/bench_startup.py --runs 21 --keep   # keep the files
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "examples" / "mnist_cnn.py"
PLAIN = Path(sysconfig.get_paths()["stdlib"]) / "colorsys.py"  # real code that wakes no rule
TARGET_PLAIN = 1.3  # against `import click`
# A project's config loader: no GPU code, but `load(`, slices in loops, a print under __main__
JSON_LOADER = """\"\"\"Read the run's settings.\"\"\"

import json
import sys
from pathlib import Path

DEFAULTS = {"lr": 0.1, "epochs": 10, "batch_size": 64}


def load_config(path):
    with open(path) as f:
        config = json.load(f)
    for key, value in DEFAULTS.items():
        config.setdefault(key, value)
    return config


def short_names(names, width=8):
    return [name[:width] for name in names]


if __name__ == "__main__":
    print(load_config(Path(sys.argv[1])))
"""
TARGET = 1.5  # against `import libcst, click` and a parse

# Appended to the MNIST example (before its `if __name__ == "__main__":`) to make a
# realistic ~300-line GPU script: mixed precision, checkpoints, benchmarking, memory
# statistics, distributed set-up, with triggers for most rules.
MORE = """

def make_loader(dataset, batch_size, workers=2):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True)


def describe_device():
    if not torch.cuda.is_available():
        print("running on the CPU")
        return
    print(f"GPUs: {torch.cuda.device_count()}, current: {torch.cuda.current_device()}")
    print(f"name: {torch.cuda.get_device_name(0)}")
    props = torch.cuda.get_device_properties(0)
    print(f"memory: {props.total_memory / 2**30:.1f} GiB, capability {props.major}.{props.minor}")


def setup(seed, deterministic=False):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cudnn.benchmark = not deterministic
    torch.backends.cuda.matmul.allow_tf32 = True


def train_amp(model, loader, optimizer, epochs=1, log_every=10):
    scaler = torch.cuda.amp.GradScaler()
    model.cuda()
    model.train()
    for epoch in range(epochs):
        for step, (data, target) in enumerate(loader):
            data = data.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast():
                output = model(data)
                loss = F.nll_loss(output, target)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            if step % log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    return model


@torch.no_grad()
def evaluate(model, loader, device="cuda"):
    model.eval()
    correct = total = 0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        pred = model(data).argmax(dim=1)
        correct += (pred == target).sum().item()
        total += target.numel()
    return correct / max(1, total)


def benchmark(model, batch_size=64, steps=20):
    x = torch.randn(batch_size, 1, 28, 28, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        model(x)
    end.record()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end) / steps
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"{elapsed:.2f} ms/step, peak memory {peak:.0f} MiB")
    torch.cuda.empty_cache()
    return elapsed


def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def load_checkpoint(path, model, optimizer=None, device=torch.device("cuda:0")):
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return state.get("epoch", 0)


def init_distributed(rank, world_size, backend="nccl"):
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    return torch.device(f"cuda:{rank}")


def to_device(batch, device):
    if isinstance(batch, dict):
        return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch.to(device, non_blocking=True) if batch.is_cuda is False else batch


CONFIG = {
    "device": "cuda",
    "batch_size": 64,
    "loader": {"num_workers": 4, "pin_memory": True, "persistent_workers": True},
    "amp": True,
    "grad_clip": 1.0,
}


class Trainer:
    def __init__(self, model, optimizer, config=CONFIG):
        self.config = config
        self.device = torch.device(config["device"])
        self.model = model.to(self.device)
        self.optimizer = optimizer
        self.scaler = torch.cuda.amp.GradScaler(enabled=config["amp"])
        self.step_count = 0

    def step(self, data, target):
        data, target = data.to(self.device), target.to(self.device)
        self.optimizer.zero_grad()
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.config["amp"]):
            loss = F.nll_loss(self.model(data), target)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config["grad_clip"])
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.step_count += 1
        return loss.detach()

    def fit(self, loader, epochs=1):
        losses = []
        for _ in range(epochs):
            for data, target in loader:
                losses.append(self.step(data, target).item())
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return losses

    def memory_report(self):
        if torch.cuda.is_available():
            print(torch.cuda.memory_summary(abbreviated=True))
            free, total = torch.cuda.mem_get_info()
            print(f"free {free / 2**30:.1f} of {total / 2**30:.1f} GiB")

    def state_dict(self):
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict(),
            "step": self.step_count,
        }


def fine_tune(args):
    setup(args.seed)
    describe_device()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = make_loader(synthetic_mnist(256, 2), batch_size=32)
    if args.save_model:
        save_checkpoint("start.pt", model, optimizer, 0)
        load_checkpoint("start.pt", model, optimizer)
    train_amp(model, loader, optimizer)
    trainer = Trainer(model, optimizer)
    trainer.fit(loader)
    trainer.memory_report()
    print(f"accuracy {evaluate(model, loader):.3f}")
    benchmark(model)
"""


def make_script(folder: Path) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition('\n\nif __name__ == "__main__":')
    if not sep:
        head, tail = text, ""
    head = head.replace("import argparse\n", "import argparse\nimport os\n", 1)
    script = folder / "train_gpu.py"
    script.write_text(head + MORE + sep + tail, encoding="utf-8")
    return script


def bench_env(tmp: Path) -> dict[str, str]:
    """The environment of the timed commands: bytecode cached, as for an installed tool.

    With PYTHONDONTWRITEBYTECODE set (as in some CI and sandbox set-ups) every run would
    compile migrate_xla and codemods from source again (about 0.1 s here), which no
    installed copy does; the .pyc files go to a temporary folder, not into the checkout.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


ENV: dict[str, str] = dict(os.environ)

# The tool as the `xla-migrate` console script runs it (pre-commit's entry).
CLI = [sys.executable, "-c", "import sys; from migrate_xla.app.cli import main; sys.exit(main())", "--check"]


def timed_run(cmd: list[str], runs: list[tuple[float, float]]) -> None:
    """Run cmd once; note its wall time and its CPU time (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs.append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr.decode(errors='replace')[-2000:]}")


def compare(cli: list[str], baseline: list[str], runs: int) -> tuple[list, list]:
    """(wall, cpu) of each run of both commands, alternating, after a warm-up of each."""
    cli_runs: list[tuple[float, float]] = []
    base_runs: list[tuple[float, float]] = []
    timed_run(cli, [])  # warm-up: .pyc files, page cache
    timed_run(baseline, [])
    for _ in range(runs):
        timed_run(baseline, base_runs)
        timed_run(cli, cli_runs)
    return cli_runs, base_runs


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


# Runs the check in-process (as the console script would) and says what it imported.
IMPORTED = r"""
import sys
from migrate_xla.app.cli import main
import contextlib, io
try:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["--check", sys.argv[1]], standalone_mode=False)
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("torch", "torch_xla", "numpy", "libcst", "codemods")})
from migrate_xla.generated.rule_index import RULES
modules = {row[-1] for row in RULES}
print(" ".join(heavy))
print(len(modules & set(sys.modules)), len(modules))
"""


def imported(path: Path) -> tuple[set[str], str]:
    """The heavy packages (torch, LibCST, the rules) a check of ``path`` imports, and how
    many of the rule modules (a run imports those of the rules the file wakes)."""
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTED, str(path)], cwd=REPO, capture_output=True, text=True, env=ENV
    )
    if proc.returncode != 0:
        sys.exit(f"the in-process check failed:\n{proc.stderr[-2000:]}")
    heavy, counts = proc.stdout.splitlines()[-2:]
    rules, every = counts.split()
    return set(heavy.split()), f"{rules} of the {every} rule modules"


def import_profile(script: Path, top: int = 6) -> list[str]:
    """Where the CLI's import time goes (python -X importtime): self time summed by top-level
    package, and whether torch shows up at all."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *CLI[1:], str(script)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    by_package: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            package = match.group(3).split(".")[0]
            by_package[package] = by_package.get(package, 0) + int(match.group(1))
    total = sum(by_package.values())
    ranked = sorted(by_package.items(), key=lambda item: -item[1])
    lines = [f"all imports: {total / 1000:.0f} ms; torch imported: {'yes' if 'torch' in by_package else 'no'}"]
    lines += [f"{us / 1000:7.1f} ms  {name}" for name, us in ranked[:top]]
    return lines


# The phases of one CLI run on the GPU script, in-process.
PHASES = r"""
import sys, time
t0 = time.perf_counter()
import click
ta = time.perf_counter()
import migrate_xla.app.cli
t1 = time.perf_counter()
from pathlib import Path
from migrate_xla.engine import prefilter, registry
from migrate_xla.app import run
from migrate_xla.engine import pipeline
from migrate_xla.sources.discovery import Found
import libcst
path = Path(sys.argv[1])
options = run.options_for(fixpoint=False)  # as --check
text = path.read_text(encoding="utf-8")
woken = prefilter.woken(prefilter.enabled(options.codes, options.target, options.runtime), text)
t15 = time.perf_counter()
registry.rules_of(rule.CODE for rule in woken)
t2 = time.perf_counter()
libcst.parse_module(text)
t3 = time.perf_counter()
run.migrate_file(Found(path, path.parent), options)
t4 = time.perf_counter()
print(f"import click {1000 * (ta - t0):.0f} ms | the CLI's other imports {1000 * (t1 - ta):.0f} ms | "
      f"LibCST and the engine {1000 * (t15 - t1):.0f} ms | the modules of the {len(woken)} woken rules {1000 * (t2 - t15):.0f} ms | "
      f"one parse_module {1000 * (t3 - t2):.0f} ms | "
      f"migrate_file (pre-filter, parse, rules, imports, positions, codegen) {1000 * (t4 - t3):.0f} ms")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="runs of each command (median counts)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files and print their paths")
    args = parser.parse_args()

    global ENV
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    ENV = bench_env(tmp)
    script = make_script(tmp)
    plain = tmp / "plain.py"
    shutil.copyfile(PLAIN, plain)
    loader = tmp / "config.py"
    loader.write_text(JSON_LOADER, encoding="utf-8")
    lines = script.read_text(encoding="utf-8").count("\n")
    cases = [
        ("wakes no rule", plain, [sys.executable, "-c", "import click"], "python -c 'import click'", TARGET_PLAIN),
        ("calls json.load", loader, [sys.executable, "-c", "import click"], "python -c 'import click'", TARGET_PLAIN),
        (
            "wakes rules",
            script,
            [sys.executable, "-c", f"import libcst, click; libcst.parse_module(open({str(script)!r}).read())"],
            "python -c 'import libcst, click; parse_module'",
            TARGET,
        ),
    ]
    load = os.getloadavg()[0]
    print(f"load average at the start: {load:.2f} on {os.cpu_count()} cores (the ratios are for a quiet machine)")
    met = True
    summary = []
    for name, path, baseline, label, target in cases:
        cli = [*CLI, str(path)]
        cli_runs, base_runs = compare(cli, baseline, args.runs)
        output = subprocess.run(cli, cwd=REPO, capture_output=True, text=True, env=ENV)
        heavy, rule_modules = imported(path)
        (cli_wall, cli_cpu), (base_wall, base_cpu) = medians(cli_runs), medians(base_runs)
        size = path.read_text(encoding="utf-8").count("\n")
        print(
            f"{name}: {path if args.keep else path.name} ({size} lines, {output.stdout.count(': XLA')} findings, exit {output.returncode})"
        )
        print(
            f"  baseline:    {base_wall * 1000:6.0f} ms wall {base_cpu * 1000:6.0f} ms cpu, medians of {args.runs}  "
            f"({label})  wall runs: {', '.join(f'{w * 1000:.0f}' for w, _ in base_runs)}"
        )
        print(
            f"  xla-migrate: {cli_wall * 1000:6.0f} ms wall {cli_cpu * 1000:6.0f} ms cpu, medians of {args.runs}  "
            f"(xla-migrate --check FILE)  wall runs: {', '.join(f'{w * 1000:.0f}' for w, _ in cli_runs)}"
        )
        print(f"  imported:    {', '.join(sorted(heavy)) or 'neither LibCST, the rules nor torch'} ({rule_modules})")
        ratio = cli_wall / base_wall
        verdict = "met" if ratio <= target else "MISSED"
        print(
            f"  ratio xla-migrate / baseline ({name}): {ratio:.2f} wall, {cli_cpu / base_cpu:.2f} cpu  "
            f"(target <= {target} wall: {verdict})"
        )
        summary.append(
            f"  {name}: {ratio:.2f} wall ({cli_cpu / base_cpu:.2f} cpu) against {label}, target <= {target}: {verdict}"
        )
        met = met and ratio <= target
        if "torch" in heavy or (path is not script and heavy):
            print("  FAILED: a check must never import torch, nor LibCST or the rules for a file that wakes no rule")
            summary.append(f"  {name}: FAILED, imported {', '.join(sorted(heavy))}")
            met = False
    phases = subprocess.run(
        [sys.executable, "-c", PHASES, str(script)], cwd=REPO, capture_output=True, text=True, env=ENV
    )
    print(
        f"CLI phases on the GPU script ({lines} lines), in-process: {phases.stdout.strip() or phases.stderr.strip()[-500:]}"
    )
    for name, path in (("no rule", plain), ("GPU script", script)):
        print(f"CLI imports, {name} (python -X importtime, self time by package):")
        for line in import_profile(path):
            print(f"  {line}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"Targets (medians of {args.runs}; load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end):"
    )
    print("\n".join(summary))
    print("all targets met" if met else "some target MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
