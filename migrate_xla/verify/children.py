"""Launching the child runs (reference, migrated, twin) side by side with the instrumentation on
their PYTHONPATH, stopping them, and reading each run's records back into a Run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from migrate_xla.generated import tpu_api
from migrate_xla.rule.findings import RUNTIMES
from migrate_xla.verify import cuda_refusals, float64_budget, interpreter, project_copy, sharding_report, tpu_graphs
from migrate_xla.verify.child_output import compile_causes, crash_site, stderr_report
from migrate_xla.verify.compare import Run
from migrate_xla.verify.frames import INSTRUMENT_FOLDER
from migrate_xla.verify.progress import INTERVAL_S, Progress, RecompilingWatch, latest_progress
from migrate_xla.verify.settings import TORCH_TPU, Settings

HERE = Path(__file__).resolve().parent
KILL_GRACE_S = 20.0  # after SIGTERM, time to write the record before SIGKILL
# How _run_child words the failures that no instrument causes (the harness's own stops, the
# environment): they never make the runs go again
TIMED_OUT = "timed out after"
STOPPED = "stopped: another run went past the float64 budget"
NO_BACKWARD = "the script never called backward()"
MISSING_MODULE = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'", re.M)

# The environment variable that gives a child the port its emulated process group meets at (child/emulation.py)
RENDEZVOUS_PORT = "XLA_MIGRATE_VERIFY_PORT"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _instrumentation(work: Path) -> Path:
    """A folder for the children's PYTHONPATH with the instrumentation alone: the
    ``sitecustomize`` and the ``migrate_xla.verify.child`` package (torch and the standard library only).
    Not xla-migrate's own folder: installed, that is a site-packages whose packages (libcst,
    PyYAML, built for xla-migrate's Python) would shadow those of the user's interpreter."""
    folder = work / INSTRUMENT_FOLDER
    package = folder / "migrate_xla" / "verify"
    package.mkdir(parents=True)
    shutil.copy2(HERE / "instrument" / "sitecustomize.py", folder / "sitecustomize.py")
    (folder / "migrate_xla" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    shutil.copytree(HERE / "child", package / "child", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def tpu_facts() -> dict:
    """What the child needs of migrate_xla/generated/tpu_api.py to emulate TorchTPU (it imports nothing
    of xla-migrate): the device, the backends, each public module's names."""
    return {
        "device": tpu_api.DEVICE,
        "process_group_backends": list(tpu_api.PROCESS_GROUP_BACKENDS),
        "compile_backend": tpu_api.COMPILE_BACKEND,
        "public_modules": {module: sorted(names) for module, names in tpu_api.PUBLIC_MODULES.items()},
    }


def run_all(
    jobs, args, env, settings: Settings, work: Path, float64: bool, python: interpreter.Interpreter
) -> dict[str, Run]:
    """Run the children side by side (they are independent); returns a Run per role. On a
    terminal, a live line a run shows its progress."""
    work.mkdir(parents=True, exist_ok=True)
    instrument = str(_instrumentation(work))
    env = _sharing_cores(env, len(jobs))
    runs: dict[str, Run] = {}
    # the first run to stop past the float64 budget stops the others: all run again as written
    past_budget = threading.Event()

    def child(role: str, script: Path, path: list[str]) -> None:
        run = _run_child(role, script, [instrument, *path], args, env, settings, work, float64, python, past_budget)
        runs[role] = run
        if run.float64_cost is not None:
            past_budget.set()

    threads = [threading.Thread(target=child, args=job) for job in jobs]
    progress = None
    if sys.stderr.isatty():
        progress = Progress(sys.stderr, settings.steps, {role: work / f"records-{role}" for role, _, _ in jobs})
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(INTERVAL_S)
            if progress is not None:
                progress.show(runs)
    if progress is not None:
        progress.show(runs)
    return runs


def _sharing_cores(env: dict, children: int) -> dict:
    """``env`` with each child's share of the cores for torch's CPU threads (OpenMP), unless the
    caller chose a number. Side by side, children that each start a thread a core oversubscribe
    them: on 2 cores, the ResNet-18 of benchmarks/bench_verify.py, its reference and the twin
    (eager, as written) beside the XLA run, took 81 s each with 2 threads a child and 58 s in
    all with 1 (XLA's own thread pool does not read OMP_NUM_THREADS; its run keeps its pool)."""
    if "OMP_NUM_THREADS" in env:
        return env
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return {**env, "OMP_NUM_THREADS": str(max(1, cores // children))}


def _run_child(
    role: str,
    script: Path,
    path: list[str],
    args,
    env,
    settings: Settings,
    work: Path,
    float64: bool,
    python: interpreter.Interpreter,
    stop: threading.Event,
) -> Run:
    """One child: ``path`` goes first on its PYTHONPATH (the instrumentation, the migrated project)."""
    records = work / f"records-{role}"
    records.mkdir()
    child_env = dict(env)
    # Each child its own rendezvous port (the two run side by side and would both serve one),
    # unless the caller chose one; a script's os.environ.setdefault("MASTER_PORT", ...) keeps it.
    # An emulated process group (gloo for NCCL or TorchTPU's) meets at RENDEZVOUS_PORT whatever
    # the script or the caller set: two gloo groups on one port fail (EADDRINUSE).
    port = str(_free_port())
    child_env.setdefault("MASTER_PORT", port)
    child_env[RENDEZVOUS_PORT] = port
    child_env["PYTHONPATH"] = os.pathsep.join([*path, *filter(None, [env.get("PYTHONPATH")])])
    child_env["XLA_MIGRATE_VERIFY"] = json.dumps(
        {
            "role": role,
            "record_dir": str(records),
            "steps": settings.steps,
            "align_rng": settings.align_rng,
            "seed": settings.seed,
            "float64": float64,
            "diagnose": settings.diagnose,
            "perturb": role == "twin",
            # the TPU report's capture of one step of the XLA run (child/tpu_capture.py)
            "tpu_capture": role == "migrated" and settings.runtime != TORCH_TPU and settings.tpu_report,
            # the original script (reference, twin) without a GPU: CUDA emulated as cuda_api.py decides
            **({"cuda_api": cuda_refusals.child_facts()} if role != "migrated" else {}),
            # the migrated run of a TorchTPU migration: the "tpu" device emulated on the CPU
            **(
                {"emulate": tpu_api.DEVICE, "tpu_api": tpu_facts()}
                if role == "migrated" and settings.runtime == TORCH_TPU
                else {}
            ),
            # auto: float64 unless convolutions make it cost a multiple of the bare runs
            "float64_conv_budget": float64_budget.FLOAT64_CONV_BUDGET // settings.steps
            if float64 and settings.precision == "auto"
            else None,
        }
    )
    debug_file = records / "xla-debug.txt"
    if role != "migrated" and "USE_TORCH_XLA" not in env:
        # the original runs as on a GPU: transformers and accelerate pick XLA by themselves
        # wherever torch_xla can be imported, unless this says no
        child_env["USE_TORCH_XLA"] = "0"
    if role == "migrated" and settings.runtime != TORCH_TPU:
        child_env["PJRT_DEVICE"] = settings.device or env.get("PJRT_DEVICE") or "CPU"
        # torch_xla's own account of every compilation: its cause and the Python frames
        if "PT_XLA_DEBUG_LEVEL" not in env and "PT_XLA_DEBUG" not in env:
            child_env["PT_XLA_DEBUG_LEVEL"] = "2"
            child_env["PT_XLA_DEBUG_FILE"] = str(debug_file)
        if settings.tpu_report:  # each operation's Python stack in the graphs the TPU report reads
            child_env.setdefault("XLA_HLO_DEBUG", "1")
        if settings.tpu_report and _spmd(script):  # the graphs as partitioned, for the sharding report
            child_env["XLA_FLAGS"] = sharding_report.dump_flags(records / "hlo", env.get("XLA_FLAGS"))
    run = Run(role, float64=float64, runtime=(settings.runtime or RUNTIMES[0]) if role == "migrated" else None)
    started = time.monotonic()
    with open(work / f"{role}.stdout", "wb") as out, open(work / f"{role}.stderr", "wb") as err:
        process = subprocess.Popen(
            [python.path, str(script), *args],
            cwd=project_copy.working_directory(script),  # the migrated copy's own (project_copy.py)
            env=child_env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        watch = RecompilingWatch(settings.steps, settings.timeout) if role == "migrated" else None
        while run.returncode is None:
            try:
                run.returncode = process.wait(timeout=INTERVAL_S)
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
                recompiling = watch and watch.why_stop(latest_progress(records), elapsed)
                if stop.is_set():
                    run.error = STOPPED
                elif elapsed > settings.timeout:
                    run.error = f"{TIMED_OUT} {settings.timeout:g} s (--timeout)"
                elif recompiling:
                    run.error = recompiling
                else:
                    continue
                _stop_group(process)
                break
    run.wall_s = time.monotonic() - started
    stderr = _read(work / f"{role}.stderr")
    run.stderr_tail = stderr_report(stderr)
    if run.returncode not in (0, None) and run.finished != "step-limit":
        run.crash_site = crash_site(stderr)  # the whole of it: a printout may follow the exception
    _merge_records(run, records, process.pid)
    if debug_file.is_file():
        debug = debug_file.read_text(errors="replace")
        run.compile_causes = compile_causes(debug, script)
        run.execution_causes = compile_causes(debug, script, "Execution")
        if run.stop_compilations and run.compilations is not None:  # verify's graph, not the script's
            del run.compile_causes[run.compilations : run.compilations + run.stop_compilations]
    # A crash after some steps is a crash too; the step limit is not (torch_xla.launch's pool
    # turns a worker's clean stop into exit status 1 of the parent).
    if run.error is None and run.returncode not in (0, None) and run.finished != "step-limit":
        run.error = f"exited with status {run.returncode}"
        missing = MISSING_MODULE.findall(run.stderr_tail)
        if role == "reference" and missing:
            run.error = (
                f"ModuleNotFoundError: No module named '{missing[-1]}' in {python.describe()}: the original "
                "script fails the same way without xla-migrate, so it is the environment, not the migration: "
                "install it there, or give --python the interpreter you train with"
            )
    elif run.error is None and not run.losses:
        run.error = f"{NO_BACKWARD}: no training loss to compare"
    if run.error and run.losses:
        run.error += f" after {len(run.losses)} steps"
    if run.tpu_capture:  # read now: its graphs lie in the run's temporary folder
        run.sharding = sharding_report.collect(run.tpu_capture.pop("sharding", None), records / "hlo", float64)
        run.tpu_capture = tpu_graphs.collect(run.tpu_capture, records, _read(debug_file))
    return run


def _spmd(script: Path) -> bool:
    """Whether the migrated script runs SPMD (it calls ``xr.use_spmd()``)."""
    try:
        return "use_spmd(" in script.read_text(errors="replace")
    except OSError:
        return False


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the child's process group (each instrumented process writes what it recorded),
    then SIGKILL what is left after a grace period."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _merge_records(run: Run, folder: Path, main_pid: int | None = None) -> None:
    """The run's record, from those its processes wrote (``<role>-<pid>.json``): the one of the
    process that trained (chosen_record), and a float64 budget any of them went past."""
    records = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("progress-"):
            continue
        try:
            records.append(json.loads(path.read_text()))
        except ValueError:
            continue
    chosen = chosen_record(records, main_pid)
    if chosen is None:
        # died without a record (killed, or aborted in native code): what its progress file says
        last = latest_progress(folder)
        if last is not None:
            run.compilations = last.get("compilations")
            run.steps_done = last.get("steps", 0)
        return
    run.device = chosen.get("device", "")
    run.finished = chosen.get("finished", "")
    run.losses = chosen.get("losses", [])
    run.precision = chosen.get("precision", "float32")
    run.parameters = chosen.get("parameters")
    run.seeded_by_script = chosen.get("seeded_by_script")
    run.tensors_by_step = chosen.get("tensors_by_step", [])
    run.ops_by_step = chosen.get("ops_by_step", [])
    run.steps_done = chosen.get("steps", 0)
    for key in (
        "compilations",
        "recompilations",
        "executions",
        "compilations_by_step",
        "executions_by_step",
        "stop_compilations",
    ):
        if key in chosen:
            setattr(run, key, chosen[key])
    run.cpu_fallback_ops = chosen.get("cpu_fallback_ops", {})
    costs = [r["float64_cost"] for r in records if r.get("float64_cost") is not None]
    run.float64_cost = max(costs) if costs else None
    run.compiled = chosen.get("compiled", [])
    if chosen.get("error"):
        run.error = chosen["error"]
    run.tpu_capture = chosen.get("tpu_capture")


def chosen_record(records: list[dict], main_pid: int | None) -> dict | None:
    """The record of the process that trained, the same whichever order the files are read in.

    Several processes of one run write records: DataLoader workers (forked from the trainer, they
    carry a copy of its losses from the moment they were forked, and write it when they are
    stopped with SIGTERM; spawned, they record nothing), the workers of ``mp.spawn`` or
    ``torch_xla.launch`` (the trainers: their parent records nothing). Among the records with
    losses: the lowest ordinal (rank), the process the harness started, the process that reached
    the step limit, the most optimizer steps, the most losses, the lowest pid. A record without
    losses never wins over one with; without any, the started process's, else one that says why
    (past the float64 budget, an error), else the lowest pid."""
    training = [r for r in records if r.get("losses")]
    if training:
        return min(
            training,
            key=lambda r: (
                r.get("ordinal", 0),
                r.get("pid") != main_pid,
                r.get("finished") != "step-limit",
                -r.get("steps", 0),
                -len(r["losses"]),
                r.get("pid", 0),
            ),
        )
    if not records:
        return None
    return min(
        records,
        key=lambda r: (
            r.get("pid") != main_pid,
            r.get("float64_cost") is None,
            not r.get("error"),
            r.get("pid", 0),
        ),
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
