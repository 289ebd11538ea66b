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

Here: verify's entry points (verify, profile, record_reference) and what they set up before
anything runs; children.py launches the runs and reads them back, reruns.py runs them again
where needed (without a failing instrument, in float64 to decide, to find the first difference).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from pathlib import Path

from migrate_xla.app.project import SettingsError, configure
from migrate_xla.verify import (
    cuda_refusals,
    float64_budget,
    interpreter,
    project_copy,
    tpu_chips,
    tpu_graphs,
    tpu_report,
)
from migrate_xla.verify.children import run_all
from migrate_xla.verify.compare import Result, Run, compare
from migrate_xla.verify.reruns import decided_in_float64, first_difference, without_failing_instruments
from migrate_xla.verify.settings import TORCH_TPU, Settings, VerifyError
from migrate_xla.verify.user_lines import in_user_files

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
    run again without it and the result says so (without_failing_instruments).
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
        runs = run_all(
            jobs, list(args), env, settings, work / "float64" if float64 else work / "native", float64, python
        )
        note = ""
        ran = jobs
        costly = next((r for r in runs.values() if r.float64_cost is not None), None)
        if costly is not None:
            note = (
                f"float64 would cost too much: the {costly.role} run's first forward pass does over "
                f"{costly.float64_cost / 1e9:.2g} G multiply-adds in convolutions (matrix products at 1/12), past the budget of "
                f"{float64_budget.FLOAT64_CONV_BUDGET / 1e9:g} G over the run ({float64_budget.FLOAT64_CONV_BUDGET / settings.steps / 1e9:.2g} G a "
                f"step at {settings.steps} steps); both ran as written"
            )
            float64 = False
            # and the reference's twin, rounded as XLA rounds: how far rounding alone carries
            # this training is the tolerance, step by step (compare.py)
            ran = [*jobs, ("twin", script, [])]
            runs = run_all(ran, list(args), env, settings, work / "native", False, python)
        dropped = None
        if trace is None:
            runs, float64, settings, dropped = without_failing_instruments(
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
            exact = decided_in_float64(costly, result, jobs, list(args), env, exact_settings, work, python)
            if isinstance(exact, str):
                note = f"{note}; {exact}"
            else:
                _in_user_lines(exact["migrated"], originals)
                note = (
                    f"{note}; as written, {result.message}: float64, which costs at most "
                    f"{float64_budget.FLOAT64_DECIDING_BUDGET / 1e9:g} G to settle it, decided over "
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
            result.diagnosis += first_difference(
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


def _tpu(settings: Settings) -> tpu_chips.Tpu:
    """The TPU generation the report is for; an unknown one stops verify before anything runs."""
    try:
        return tpu_chips.generation(settings.tpu)
    except tpu_chips.UnknownTpu as exc:
        raise VerifyError(f"--tpu: {exc}") from None


def _migrated_script(
    script: Path, project: Path | None, migrated: Path | None, work: Path, settings: Settings
) -> tuple[Path, Path, dict[Path, Path]]:
    """The script the migrated run runs, its folder, and each migrated copy's original: SCRIPT's
    project migrated under WORK, or the user's own migrated script (its lines are the ones to show)."""
    if migrated is None:
        try:
            root = project.resolve() if project is not None else project_copy.project_root(script)
            copy = project_copy.migrate_project(
                script, project, work / "migrated" / root.name, settings.migration(), beside=True
            )
        except project_copy.CopyError as exc:
            raise VerifyError(str(exc)) from None
        return copy.script, copy.root, copy.originals
    migrated = migrated.resolve()
    if not migrated.is_file():
        raise VerifyError(f"no such migrated script: {migrated}")
    return migrated, migrated.parent, {}


def _tpu_report(run: Run, settings: Settings, tpu: tpu_chips.Tpu, float64: bool, originals: dict) -> dict:
    """The TPU report of the migrated run, in the user's lines (tpu_report.py)."""
    why_not = None
    if settings.runtime == TORCH_TPU:
        why_not = (
            "a TorchTPU migration runs eagerly here, with the tpu device emulated: there are no XLA graphs to read"
        )
    return tpu_report.build(tpu_graphs.in_user_lines(run.tpu_capture, originals), run, tpu, float64, why_not)


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
        run = run_all(jobs, list(args), env, settings, work / "native", False, python)["migrated"]
        run.compile_causes = in_user_files(run.compile_causes, originals)
        return run, _tpu_report(run, settings, tpu, False, originals)


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
        runs = run_all([("reference", script, [])], list(args), env, settings, Path(tmp), float64, python)
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
    comes per child, in ``children._run_child``). A script that only probes for torchrun
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


def _interpreter(settings: Settings, env: dict[str, str], xla: bool) -> interpreter.Interpreter:
    """The children's interpreter, probed: it has torch (and the torch_xla of its release where ``xla``)."""
    try:
        python = interpreter.probe(interpreter.choose(settings.python, env), env)
        interpreter.require(python, xla)
    except interpreter.InterpreterError as exc:
        raise VerifyError(str(exc)) from None
    return python
