"""Runs the original and the migrated script as child processes and compares their losses.

The parent never imports torch: the children do, instrumented by the ``child`` package through
the ``sitecustomize`` on the PYTHONPATH it injects. Both children run with the user's
training interpreter (interpreter.py) with the same arguments and environment: the original
in the caller's working directory, the migration in the same folder of a migrated copy of the
script's project (project_copy.py: migrated as ``[tool.xla-migrate]`` says, as the CLI would,
the rest linked), so imports and relative paths resolve alike. The user's files are never
written by verify itself.

The migrated run of a PyTorch/XLA migration runs on PJRT (CPU unless PJRT_DEVICE says); that
of a TorchTPU migration (runtime torch-tpu) runs eagerly on the CPU with the "tpu" device
emulated, as the reference emulates CUDA, and needs no torch_xla.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from migrate_xla.app.project import MIGRATION_FIELDS, SettingsError, configure
from migrate_xla.generated import tpu_api
from migrate_xla.rule.findings import RUNTIMES
from migrate_xla.verify import cuda_refusals, interpreter, project_copy, sharding_report, tpu_report
from migrate_xla.verify.compare import MIN_DECIDING_STEPS, Result, Run, compare
from migrate_xla.verify.diagnosis import in_user_files
from migrate_xla.verify.frames import INSTRUMENT_FOLDER, library_of
from migrate_xla.verify.frames import is_library as _is_library
from migrate_xla.verify.progress import INTERVAL_S, RECOMPILING, Progress, RecompilingWatch, latest_progress

HERE = Path(__file__).resolve().parent
TRACE_FORMAT = "xla-migrate-reference/1"
# A read of torchrun's variables that fails without them (``os.environ["RANK"]``), as opposed
# to a probe (``os.environ.get("RANK", -1)``, ``"RANK" in os.environ``) that picks a path.
TORCHRUN_REQUIRED = re.compile(r"""environ\s*\[\s*['"](?:LOCAL_RANK|RANK|WORLD_SIZE)['"]\s*\]""")
TORCHRUN_ENVIRONMENT = {
    "RANK": "0",
    "LOCAL_RANK": "0",
    "WORLD_SIZE": "1",
    "LOCAL_WORLD_SIZE": "1",
    "MASTER_ADDR": "127.0.0.1",
}
KILL_GRACE_S = 20.0  # after SIGTERM, time to write the record before SIGKILL
PRECISIONS = ("auto", "float64", "native")
# The instruments of both runs that a script can run without, as the report names them: where the
# original script fails under them and not without, that failure is verify's, not the script's
# (docs/verify.md): both run again without them (_without_failing_instruments)
FLOAT64_INSTRUMENT = "float64"
RNG_INSTRUMENT = "aligned random numbers"
# How _run_child words the failures that no instrument causes (the harness's own stops, the
# environment): they never make the runs go again
TIMED_OUT = "timed out after"
STOPPED = "stopped: another run went past the float64 budget"
NO_BACKWARD = "the script never called backward()"
# Multiply-adds in convolutions over the run (those of the first forward pass times --steps)
# past which --precision auto runs as written instead of in float64: XLA's CPU float64
# convolutions are ~40x slower than float32 ones (child/float64.py). The examples' largest, the
# ResNet of fixtures/examples/resnet_fakedata.py, does 0.2 G a forward pass (1.6 G in 8
# steps) and verifies in float64; the ResNet-18 of benchmarks/bench_verify.py, 14.5 G (145 G
# in 10 steps), would take over 900 s in float64 and runs as written.
FLOAT64_CONV_BUDGET = 4_000_000_000
# Runs as written that settle nothing, where float64 was left for its cost alone, are compared
# again in float64 over as many steps as this many multiply-adds allow (_decided_in_float64):
# - where they disagree past the twin's tolerance: rounding the twin does not model (a float32 GAN
#   amplifies it) is then no mismatch, and a wrong migration still is one. rasbt/machine-learning-
#   book's DCGAN notebook (0.49 G a forward pass): 4.9e-4 apart at step 3 as written against a
#   calibrated 1e-4, 5e-13 in float64 (docs/realworld.md);
# - where they agree, but over fewer steps than a verdict needs whose tolerance could catch a
#   wrong migration (compare.DECIDING_RTOL): a chaotic training's calibrated tolerance passes 1e-2
#   by its second or third step (a siamese network with Adadelta and BatchNorm: 2.0).
FLOAT64_DECIDING_BUDGET = 2 * FLOAT64_CONV_BUDGET
TORCH_TPU = "torch-tpu"  # the runtime whose migrated run emulates the "tpu" device (child/tpu_emulation.py)
assert TORCH_TPU in RUNTIMES
MISSING_MODULE = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'", re.M)


class VerifyError(Exception):
    """Verification could not start (missing script, unreadable trace, ...)."""


@dataclass
class Settings:
    steps: int = 10
    timeout: float = 600.0
    device: str | None = None  # PJRT_DEVICE of the migrated run; default: the environment's, else CPU
    align_rng: bool = True
    rtol: float | None = None
    atol: float | None = None
    # How the script is migrated, the command line's migration options (migrate_xla/app/project.py);
    # None: as [tool.xla-migrate] of the project's pyproject.toml says (its defaults without one)
    unsafe_fixes: bool | None = None
    target: str | None = None  # single, multiprocess or spmd
    runtime: str | None = None  # torch-xla or torch-tpu (run on the CPU with the "tpu" device emulated)
    select: tuple[str, ...] | None = None  # rule codes or prefixes
    ignore: tuple[str, ...] | None = None
    python: str | None = None  # the children's interpreter; None: $VIRTUAL_ENV's python, else this one
    seed: int = 0  # both runs start from it (torch, random, NumPy); the script's own seeding wins
    precision: str = "auto"  # float64 (the exactness check), native, or auto: float64 on CPU PJRT
    diagnose: bool = False  # record every parameter's and gradient's norm at every step
    torchrun: bool | None = None  # one-process torchrun variables; None: when the script needs them
    tpu: str = tpu_report.DEFAULT_TPU  # the TPU generation the report is for (tpu_report.TPUS)
    tpu_report: bool = True  # read one step's graphs of the XLA run for the TPU report (tpu_report.py)

    def migration(self) -> dict[str, object]:
        """The migration settings given (migrate_xla/rule/settings.py's fields), to put in place of the configuration's."""
        return {name: getattr(self, name) for name in MIGRATION_FIELDS if getattr(self, name) is not None}

    def float64(self, env: dict[str, str] | None = None) -> bool:
        if self.precision != "auto":
            return self.precision == "float64"
        if self.runtime == TORCH_TPU:  # emulated on the CPU, as the reference: float64 costs little
            return True
        device = self.device or (env or os.environ).get("PJRT_DEVICE") or "CPU"
        return device.upper() == "CPU"


def verify(
    script: Path,
    args: list[str] = (),
    settings: Settings | None = None,
    migrated: Path | None = None,
    project: Path | None = None,
    reference_trace: Path | None = None,
) -> Result:
    """Migrate (unless ``migrated`` is given), run both sides, compare.

    In float64 (the default on CPU PJRT) both runs compute in float64; where the original
    fails under an instrument it can run without (float64, the aligned random numbers), both
    run again without it and the result says so (_without_failing_instruments).
    """
    settings = settings or Settings()
    script = script.resolve()
    if not script.is_file():
        raise VerifyError(f"no such script: {script}")
    if migrated is not None and project is not None:
        raise VerifyError(
            "--project names the folder to migrate with SCRIPT; with --migrated nothing is migrated "
            "(the migrated script's own folder is on its path): give one of them"
        )
    settings = dataclasses.replace(settings, runtime=runtime_of(settings, (project or script.parent).resolve()))
    tpu = _tpu(settings)
    if settings.runtime == TORCH_TPU and settings.device is not None:
        raise VerifyError(
            f"--device {settings.device} is PyTorch/XLA's PJRT_DEVICE: a torch-tpu migration runs with the "
            "tpu device emulated on the CPU (no PJRT)"
        )
    trace = load_trace(reference_trace) if reference_trace is not None else None
    float64 = trace["float64"] if trace is not None else settings.float64()
    if trace is not None:  # the trace's precision it is, whatever it costs
        settings = dataclasses.replace(settings, precision="float64" if float64 else "native")
    env = _shared_environment(script, settings)
    if trace is None:
        _refuse_unemulated_cuda(script, (project or project_copy.project_root(script)).resolve(), env)
    python = _interpreter(settings, env, xla=settings.runtime != TORCH_TPU)
    with tempfile.TemporaryDirectory(prefix="xla-migrate-verify-") as tmp:
        work = Path(tmp)
        migrated, migrated_root, originals = _migrated_script(script, project, migrated, work, settings)
        jobs = [("migrated", migrated, [str(migrated_root)])]
        if trace is None:
            jobs.append(("reference", script, []))
        runs = _run_all(
            jobs, list(args), env, settings, work / "float64" if float64 else work / "native", float64, python
        )
        note = ""
        ran = jobs
        costly = next((r for r in runs.values() if r.float64_cost is not None), None)
        if costly is not None:
            note = (
                f"float64 would cost too much: the {costly.role} run's first forward pass does over "
                f"{costly.float64_cost / 1e9:.2g} G multiply-adds in convolutions (matrix products at 1/12), past the budget of "
                f"{FLOAT64_CONV_BUDGET / 1e9:g} G over the run ({FLOAT64_CONV_BUDGET / settings.steps / 1e9:.2g} G a "
                f"step at {settings.steps} steps); both ran as written"
            )
            float64 = False
            # and the reference's twin, rounded as XLA rounds: how far rounding alone carries
            # this training is the tolerance, step by step (compare.py)
            ran = [*jobs, ("twin", script, [])]
            runs = _run_all(ran, list(args), env, settings, work / "native", False, python)
        dropped = None
        if trace is None:
            runs, float64, settings, dropped = _without_failing_instruments(
                runs, ran, list(args), env, settings, work, float64, python
            )
        if dropped is not None:
            dropping = f"{dropped['instrument']} dropped: the {dropped['run']} run failed under it; both ran without it"
            note = f"{note}; {dropping}" if note else dropping
        _in_user_lines(runs["migrated"], originals)
        reference = runs["reference"] if trace is None else trace["run"]
        result = compare(
            reference,
            runs["migrated"],
            settings.rtol,
            settings.atol,
            float64=float64,
            seed=settings.seed,
            twin=runs.get("twin"),
        )
        unsettled = result.verdict in ("mismatch", "inconclusive")
        if unsettled and costly is not None and not float64 and dropped is None and trace is None:
            exact_settings = dataclasses.replace(settings, precision="float64")  # no budget stops these runs
            exact = _decided_in_float64(costly, result, jobs, list(args), env, exact_settings, work, python)
            if isinstance(exact, str):
                note = f"{note}; {exact}"
            else:
                _in_user_lines(exact["migrated"], originals)
                note = (
                    f"{note}; as written, {result.message}: float64, which costs at most "
                    f"{FLOAT64_DECIDING_BUDGET / 1e9:g} G to settle it, decided over "
                    f"{len(exact['reference'].losses)} steps"
                )
                runs, float64, settings = exact, True, exact_settings
                result = compare(
                    runs["reference"], runs["migrated"], settings.rtol, settings.atol, float64=True, seed=settings.seed
                )
        if result.verdict == "inconclusive":
            result.message += (
                f". To decide: --precision float64 (both runs exact, at its cost), --steps "
                f"{max(result.steps_deciding, 1)} (the steps the tolerance decides), --reference with a trace saved "
                "on a GPU (--save-reference; compared at float32's tolerance) or an --rtol of your own"
            )
        if result.verdict == "mismatch" and result.first_mismatch is not None and not settings.diagnose:
            result.diagnosis += _first_difference(
                jobs, list(args), env, settings, work, float64, python, originals, result
            )
        result.python = python
        result.runtime = settings.runtime
        result.dropped_instrument = dropped
        if settings.tpu_report:
            result.tpu_report = _tpu_report(runs["migrated"], settings, tpu, float64, originals)
        if note:
            result.tolerance_source = f"{result.tolerance_source} ({note})"
        return result


def _in_user_lines(run: Run, originals: dict[Path, Path]) -> None:
    """What compiled and where a run crashed, told in the user's own files and lines, not the
    temporary copies'."""
    run.execution_causes = in_user_files(run.execution_causes, originals)
    run.compile_causes = in_user_files(run.compile_causes, originals)
    run.ops_by_step = [in_user_files(ops, originals) for ops in run.ops_by_step]
    if run.crash_site is not None:
        run.crash_site = in_user_files([run.crash_site], originals)[0]
    run.compiled = in_user_files(run.compiled, originals)


def _decided_in_float64(
    costly: Run, result: Result, jobs, args, env, settings: Settings, work: Path, python
) -> dict[str, Run] | str:
    """Both runs again in float64 (``settings``: --precision float64), where float64 was left for its
    cost alone and the runs as written settled nothing: they differ past a tolerance the twin may
    have underestimated, or agree over too few steps whose tolerance could catch a wrong migration.
    Over as many steps as FLOAT64_DECIDING_BUDGET allows, if those reach the first difference (or
    the steps a verdict needs: compare.MIN_DECIDING_STEPS); otherwise, or where a run fails in
    float64, why not (words for the report)."""
    needed = result.first_mismatch or min(MIN_DECIDING_STEPS, settings.steps)
    steps = min(settings.steps, FLOAT64_DECIDING_BUDGET // max(costly.float64_cost, 1))
    if steps < needed:
        return (
            f"float64 over {needed} steps would cost {needed * costly.float64_cost / 1e9:.2g} G multiply-adds in "
            f"convolutions, past the {FLOAT64_DECIDING_BUDGET / 1e9:g} G float64 may take to decide"
        )
    runs = _run_all(
        jobs, args, env, dataclasses.replace(settings, steps=steps), work / "float64-deciding", True, python
    )
    failed = next((run for run in runs.values() if run.error is not None), None)
    if failed is not None:
        return f"float64 could not decide: the {failed.role} run failed in it ({_exception(failed)})"
    return runs


def _tpu(settings: Settings) -> tpu_report.Tpu:
    """The TPU generation the report is for; an unknown one stops verify before anything runs."""
    try:
        return tpu_report.generation(settings.tpu)
    except tpu_report.UnknownTpu as exc:
        raise VerifyError(f"--tpu: {exc}") from None


def _migrated_script(
    script: Path, project: Path | None, migrated: Path | None, work: Path, settings: Settings
) -> tuple[Path, Path, dict[Path, Path]]:
    """The script the migrated run runs, its folder, and each migrated copy's original: SCRIPT's
    project migrated under WORK, or the user's own migrated script (its lines are the ones to show)."""
    if migrated is None:
        try:
            copy = project_copy.migrate_project(script, project, work / "migrated", settings.migration())
        except project_copy.CopyError as exc:
            raise VerifyError(str(exc)) from None
        return copy.script, copy.root, copy.originals
    migrated = migrated.resolve()
    if not migrated.is_file():
        raise VerifyError(f"no such migrated script: {migrated}")
    return migrated, migrated.parent, {}


def _tpu_report(run: Run, settings: Settings, tpu: tpu_report.Tpu, float64: bool, originals: dict) -> dict:
    """The TPU report of the migrated run, in the user's lines (tpu_report.py)."""
    why_not = None
    if settings.runtime == TORCH_TPU:
        why_not = (
            "a TorchTPU migration runs eagerly here, with the tpu device emulated: there are no XLA graphs to read"
        )
    return tpu_report.build(tpu_report.in_user_lines(run.tpu_capture, originals), run, tpu, float64, why_not)


def profile(
    script: Path,
    args: list[str] = (),
    settings: Settings | None = None,
    migrated: Path | None = None,
    project: Path | None = None,
) -> tuple[Run, dict]:
    """The TPU report alone: only the migrated run, as written (not in float64), no comparison.
    Returns the run and the report (tpu_report.build)."""
    settings = dataclasses.replace(settings or Settings(), tpu_report=True, precision="native")
    script = script.resolve()
    if not script.is_file():
        raise VerifyError(f"no such script: {script}")
    settings = dataclasses.replace(settings, runtime=runtime_of(settings, (project or script.parent).resolve()))
    tpu = _tpu(settings)
    if settings.runtime == TORCH_TPU:
        raise VerifyError(
            "the TPU report reads PyTorch/XLA's graphs: a TorchTPU migration (--runtime torch-tpu) has none"
        )
    env = _shared_environment(script, settings)
    python = _interpreter(settings, env, xla=True)
    with tempfile.TemporaryDirectory(prefix="xla-migrate-verify-") as tmp:
        work = Path(tmp)
        migrated, migrated_root, originals = _migrated_script(script, project, migrated, work, settings)
        jobs = [("migrated", migrated, [str(migrated_root)])]
        run = _run_all(jobs, list(args), env, settings, work / "native", False, python)["migrated"]
        run.compile_causes = in_user_files(run.compile_causes, originals)
        return run, _tpu_report(run, settings, tpu, False, originals)


def _without_failing_instruments(runs, jobs, args, env, settings: Settings, work: Path, float64: bool, python):
    """The runs to compare, where a run failed under an instrument it can run without: float64
    mode (under ``--precision auto``) and, for the original script, the aligned random numbers.

    The original script is the user's working code: when it fails only under verify, that is
    verify's failure, never a verdict about the migration. So when the reference fails (or the
    migrated run fails in float64, which XLA may not compute as the script needs), both run
    again without float64, then also without the aligned random numbers, until the run that
    failed runs: both ran without what was dropped, and the report says what and the error it
    caused. Fails the same way without them all: the failure is the script's own (or the
    migration's), shown as the instrumented runs saw it; fails otherwise: as it fails there.

    Returns the runs, whether they computed in float64, the settings they ran with, and what was
    dropped (None: nothing): ``{"instrument", "run", "error"}``."""
    failed = _failure_an_instrument_may_cause(runs, float64 and settings.precision == "auto")
    if failed is None:
        return runs, float64, settings, None
    drop = [FLOAT64_INSTRUMENT] if float64 and settings.precision == "auto" else []
    if failed.role == "reference" and settings.align_rng:
        drop.append(RNG_INSTRUMENT)
    dropped: list[str] = []
    again, bare, bare_float64 = None, settings, float64
    for instrument in drop:
        dropped.append(instrument)
        if instrument == FLOAT64_INSTRUMENT:
            bare_float64 = False
        else:
            bare = dataclasses.replace(bare, align_rng=False)
        folder = work / ("without-" + "-".join(name.split()[-1] for name in dropped))
        again = _run_all(jobs, args, env, bare, folder, bare_float64, python)
        if again[failed.role].error is None:
            break
    if again is None or (again[failed.role].error is not None and _same_failure(again[failed.role], failed)):
        return runs, float64, settings, None
    return (
        again,
        bare_float64,
        bare,
        {
            "instrument": " and ".join(dropped),
            "run": failed.role,
            "error": _exception(failed),
            "at": _failed_at(failed),
        },
    )


def _failed_at(run: Run) -> str | None:
    """Where a run's exception was raised, in words: the library's frame where one raised it
    (``safetensors/torch.py:310, in load_file``, told with the library's version), else the
    user's line."""
    site = run.crash_site or {}
    library = site.get("library")
    if library:
        version = f" {library['version']}" if library.get("version") else ""
        return f"{library['path']}:{library['line']}, in {library['function']} ({library['name']}{version})"
    if site.get("file"):
        return f"{site['file']}:{site['line']}, in {site.get('function')}"
    return None


def _failure_an_instrument_may_cause(runs: dict[str, Run], float64_auto: bool) -> Run | None:
    """The run whose failure may be an instrument's: the reference's, else the migrated run's
    in float64 mode. Not a timeout or a stop of the harness's own, a script that never trains,
    a module missing from the environment or the script's own usage message (``usage: ...``,
    exit status 2 from argparse)."""
    for role in ("reference", "migrated"):
        run = runs.get(role)
        if run is None or run.error is None or (role == "migrated" and not float64_auto):
            continue
        if run.error.startswith((TIMED_OUT, STOPPED, RECOMPILING, NO_BACKWARD, "ModuleNotFoundError")):
            continue
        if run.returncode == 2 and re.search(r"^usage: ", run.stderr_tail, re.M):
            continue
        return run
    return None


def _exception(run: Run) -> str:
    """How a failed run failed: its exception where it left a traceback, else its error."""
    site = run.crash_site or {}
    return site.get("exception") or run.error or ""


def _same_failure(one: Run, other: Run) -> bool:
    """Whether two runs failed alike: the same exception, addresses and temporary paths aside."""

    def plain(run: Run) -> str:
        return re.sub(r"0x[0-9a-fA-F]+|/tmp/[^\s'\"]+", "...", _exception(run))

    return plain(one) == plain(other)


def _first_difference(jobs, args, env, settings, work, float64, python, originals, result) -> list:
    """Where two runs whose losses diverge first differ, found without being asked: both run
    again up to the diverging step with every operation recorded (as ``--diagnose``), and the
    first operation (or parameter) that differs is named, at the user's own line, with the
    rule or runtime defect that covers it (docs/verify.md, the diagnosis)."""
    if not any(role == "reference" for role, _, _ in jobs):
        return []  # against a saved trace: the reference's operations were not recorded
    again = dataclasses.replace(settings, diagnose=True, steps=result.first_mismatch)
    runs = _run_all(jobs, args, env, again, work / "localise", float64, python)
    if any(run.error for run in runs.values()):
        return []
    runs["migrated"].ops_by_step = [in_user_files(ops, originals) for ops in runs["migrated"].ops_by_step]
    localised = compare(runs["reference"], runs["migrated"], settings.rtol, settings.atol, float64=float64)
    return [f for f in localised.diagnosis if f.kind in ("first-op", "first-tensor")]


def runtime_of(settings: Settings, project: Path) -> str:
    """The runtime the migration is for: the one given, else [tool.xla-migrate]'s for ``project``."""
    if settings.runtime is not None:
        return settings.runtime
    try:
        return configure([project], **settings.migration()).runtime
    except SettingsError as exc:
        raise VerifyError(str(exc)) from None


def record_reference(script: Path, args: list[str], settings: Settings, trace: Path) -> Run:
    """Run only the reference (on a GPU machine, say) and save its losses to ``trace``.

    It runs as written unless float64 is asked for: the trace is for an XLA device
    (a TPU) that has no float64 of its own. It needs torch, not torch_xla.
    """
    script = script.resolve()
    if not script.is_file():
        raise VerifyError(f"no such script: {script}")
    float64 = settings.precision == "float64"
    env = _shared_environment(script, settings)
    _refuse_unemulated_cuda(script, project_copy.project_root(script), env)
    python = _interpreter(settings, env, xla=False)
    with tempfile.TemporaryDirectory(prefix="xla-migrate-verify-") as tmp:
        runs = _run_all([("reference", script, [])], list(args), env, settings, Path(tmp), float64, python)
    run = runs["reference"]
    if run.error is None:
        trace.write_text(
            json.dumps(
                {
                    "format": TRACE_FORMAT,
                    "script": script.name,
                    "args": list(args),
                    "steps": settings.steps,
                    "python": python.to_dict(),
                    "device": run.device,
                    "precision": run.precision,
                    "float64": float64,
                    "seed": settings.seed,
                    "losses": run.losses,
                    "parameters": run.parameters,
                    "seeded_by_script": run.seeded_by_script,
                    "tensors_by_step": run.tensors_by_step,
                    "ops_by_step": run.ops_by_step,
                },
                indent=2,
            )
        )
    return run


def _refuse_unemulated_cuda(script: Path, root: Path, env: dict[str, str]) -> None:
    """Before anything runs: a reference without a GPU cannot run the names of torch.cuda its
    emulation refuses (cuda_refusals.py); the script and the local modules it imports are read."""
    if not cuda_refusals.gpu_present(env):
        refusals = cuda_refusals.scan(script, root)
        if refusals:
            raise VerifyError(cuda_refusals.explain(refusals))


def load_trace(path: Path) -> dict:
    """A saved reference: its Run, and whether it ran in float64."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise VerifyError(f"cannot read reference trace {path}: {exc}") from None
    if data.get("format") != TRACE_FORMAT:
        raise VerifyError(f"{path} is not a reference trace written by --save-reference")
    run = Run(
        "reference",
        device=f"{data['device']} (saved trace)",
        losses=data["losses"],
        precision=data["precision"],
        parameters=data.get("parameters"),
        seeded_by_script=data.get("seeded_by_script"),
        tensors_by_step=data.get("tensors_by_step", []),
        ops_by_step=data.get("ops_by_step", []),
    )
    return {"run": run, "float64": bool(data.get("float64", False))}


def _shared_environment(script: Path, settings: Settings) -> dict[str, str]:
    """What both children get: the caller's environment, one hash seed, and a one-process
    torchrun setup where asked or where the script cannot start without one (MASTER_PORT
    comes per child, in ``_run_child``). A script that only probes for torchrun
    (``os.environ.get("RANK", -1)``) runs the way its user runs it: without."""
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", str(settings.seed))
    torchrun = settings.torchrun
    if torchrun is None:
        try:
            torchrun = bool(TORCHRUN_REQUIRED.search(script.read_text(errors="replace")))
        except OSError:
            torchrun = False
    if torchrun:
        for key, value in TORCHRUN_ENVIRONMENT.items():
            env.setdefault(key, value)
    return env


# The environment variable that gives a child the port its emulated process group meets at (child/emulation.py)
RENDEZVOUS_PORT = "XLA_MIGRATE_VERIFY_PORT"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _interpreter(settings: Settings, env: dict[str, str], xla: bool) -> interpreter.Interpreter:
    """The children's interpreter, probed: it has torch (and the torch_xla of its release where ``xla``)."""
    try:
        python = interpreter.probe(interpreter.choose(settings.python, env), env)
        interpreter.require(python, xla)
    except interpreter.InterpreterError as exc:
        raise VerifyError(str(exc)) from None
    return python


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


def _run_all(
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
            "float64_conv_budget": FLOAT64_CONV_BUDGET // settings.steps
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
        run.tpu_capture = tpu_report.collect(run.tpu_capture, records, _read(debug_file))
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


def _analysis(kind: str) -> tuple[re.Pattern, re.Pattern]:
    """PT_XLA_DEBUG_LEVEL=2's blocks of one kind (``Compilation``, ``Execution``) and their frames."""
    block = re.compile(rf"^{kind} Analysis: {kind} Cause\n(.*?)^{kind} Analysis: -{{10,}}", re.S | re.M)
    return block, re.compile(rf"^{kind} Analysis:\s+(\S+) \((.+):(\d+)\)$", re.M)


def compile_causes(text: str, script: Path, kind: str = "Compilation") -> list[dict]:
    """Each compilation (or, with ``kind="Execution"``, each execution) torch_xla reported
    (PT_XLA_DEBUG_LEVEL=2): its cause and the innermost frame of the user's code (not torch's,
    not torch_xla's, not ours)."""
    blocks, frames = _analysis(kind)
    causes = []
    for block in blocks.finditer(text):
        body = block.group(1)
        lines = [line.removeprefix(f"{kind} Analysis:").strip() for line in body.splitlines()]
        cause = lines[0] if lines else ""
        where = {}
        for name, file, line in frames.findall(body):  # innermost first
            if not _is_library(file):
                where.update(function=name, file=file, line=int(line))
                break
            library = library_of(file)
            if library is not None and "library" not in where:  # the library's line the user's code called
                where["library"] = {**library, "line": int(line), "function": name}
        causes.append({"cause": cause, **where})
    return causes


TRACEBACK = "Traceback (most recent call last):"
TRACEBACK_FRAME = re.compile(r'^  File "(.+)", line (\d+), in (.+)$', re.M)


def last_traceback(lines: list[str]) -> tuple[int, int] | None:
    """The last traceback among ``lines``: the index of its first line and of its exception
    line (the first line after its frames that is not indented; ``len(lines)`` where the output
    ends before one). Found wherever it is: a tensor printed after it, or in its message, may
    fill the tail of the output."""
    start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].rstrip().endswith(TRACEBACK)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end][0].isspace()):
        end += 1
    return start, end


def crash_site(text: str) -> dict | None:
    """Where the last traceback in ``text`` (a child's stderr, the whole of it) left the user's
    code: the innermost frame outside torch, the libraries and the instrumentation, and the
    exception (its line, and its message from there: ``exception_text``)."""
    lines = text.splitlines()
    found = last_traceback(lines)
    if found is None:
        return None
    start, end = found
    frames = [m.groups() for m in map(TRACEBACK_FRAME.match, lines[start + 1 : end]) if m]
    if not frames:
        return None
    exception = lines[end] if end < len(lines) else ""
    site = {"exception": exception[:300], "exception_text": "\n".join(lines[end : end + 40])[:2000]}
    for file, line, function in reversed(frames):
        if not _is_library(file):
            site.update(function=function, file=file, line=int(line))
            break
    for file, line, function in reversed(frames):  # raised in a library the user's code called?
        if not _is_library(file):
            break
        library = library_of(file)  # None for torch's own frames and Python's: look further out
        if library is not None:
            site["library"] = {**library, "line": int(line), "function": function}
            break
    return site


def stderr_report(text: str, lines: int = 25) -> str:
    """What the report shows of a child's stderr: its last ``lines`` lines, and where the last
    traceback's exception is not among them (a large tensor printed after it, or in its
    message), that traceback and exception first, what follows cut down to its last lines."""
    every = text.splitlines()
    tail = every[-lines:]
    found = last_traceback(every)
    if found is None or found[1] >= len(every) - lines:
        return "\n".join(tail)
    start, end = found
    block = every[start : end + 1]
    if len(block) > 20:  # a deep stack: its first line and its innermost frames
        block = [block[0], "  ...", *block[-18:]]
    message = every[end + 1 : end + 4]
    rest = every[end + 1 + len(message) :]
    last = rest[-5:]
    cut = len(rest) - len(last)
    return "\n".join([*block, *message, *([f"[... {cut} more lines ...]"] if cut else []), *last])


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
