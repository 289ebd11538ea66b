"""The runs verify makes again: without an instrument the original script fails under, in
float64 where the runs as written settle nothing, and up to the step where diverging losses
part with every operation recorded (the diagnosis's first difference)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from migrate_xla.verify import float64_budget
from migrate_xla.verify.children import NO_BACKWARD, STOPPED, TIMED_OUT, run_all
from migrate_xla.verify.compare import MIN_DECIDING_STEPS, Result, Run, compare
from migrate_xla.verify.progress import RECOMPILING
from migrate_xla.verify.settings import Settings
from migrate_xla.verify.user_lines import in_user_files

# The instruments of both runs that a script can run without, as the report names them: where the
# original script fails under them and not without, that failure is verify's, not the script's
# (docs/verify.md): both run again without them (without_failing_instruments)
FLOAT64_INSTRUMENT = "float64"
RNG_INSTRUMENT = "aligned random numbers"


def without_failing_instruments(runs, jobs, args, env, settings: Settings, work: Path, float64: bool, python):
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
        again = run_all(jobs, args, env, bare, folder, bare_float64, python)
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


def first_difference(jobs, args, env, settings, work, float64, python, originals, result) -> list:
    """Where two runs whose losses diverge first differ, found without being asked: both run
    again up to the diverging step with every operation recorded (as ``--diagnose``), and the
    first operation (or parameter) that differs is named, at the user's own line, with the
    rule or runtime defect that covers it (docs/verify.md, the diagnosis)."""
    if not any(role == "reference" for role, _, _ in jobs):
        return []  # against a saved trace: the reference's operations were not recorded
    again = dataclasses.replace(settings, diagnose=True, steps=result.first_mismatch)
    runs = run_all(jobs, args, env, again, work / "localise", float64, python)
    if any(run.error for run in runs.values()):
        return []
    runs["migrated"].ops_by_step = [in_user_files(ops, originals) for ops in runs["migrated"].ops_by_step]
    localised = compare(runs["reference"], runs["migrated"], settings.rtol, settings.atol, float64=float64)
    return [f for f in localised.diagnosis if f.kind in ("first-op", "first-tensor")]


def decided_in_float64(
    costly: Run, result: Result, jobs, args, env, settings: Settings, work: Path, python
) -> dict[str, Run] | str:
    """Both runs again in float64 (``settings``: --precision float64), where float64 was left for its
    cost alone and the runs as written settled nothing: they differ past a tolerance the twin may
    have underestimated, or agree over too few steps whose tolerance could catch a wrong migration.
    Over as many steps as FLOAT64_DECIDING_BUDGET allows, if those reach the first difference (or
    the steps a verdict needs: compare.MIN_DECIDING_STEPS); otherwise, or where a run fails in
    float64, why not (words for the report)."""
    needed = result.first_mismatch or min(MIN_DECIDING_STEPS, settings.steps)
    steps = min(settings.steps, float64_budget.FLOAT64_DECIDING_BUDGET // max(costly.float64_cost, 1))
    if steps < needed:
        return (
            f"float64 over {needed} steps would cost {needed * costly.float64_cost / 1e9:.2g} G multiply-adds in "
            f"convolutions, past the {float64_budget.FLOAT64_DECIDING_BUDGET / 1e9:g} G float64 may take to decide"
        )
    runs = run_all(jobs, args, env, dataclasses.replace(settings, steps=steps), work / "float64-deciding", True, python)
    failed = next((run for run in runs.values() if run.error is not None), None)
    if failed is not None:
        return f"float64 could not decide: the {failed.role} run failed in it ({_exception(failed)})"
    return runs
