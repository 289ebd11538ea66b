"""Step-by-step comparison of two loss curves, the verdict, and how it is shown.

float64 (the default on CPU PJRT: both runs compute in float64, see child/float64.py): rtol
1e-6, atol 1e-9. A correct migration agrees to about 1e-12 there (eager CPU against
XLA: different summation orders, float64 rounding); chaotic training multiplies that
by 1e3-1e5 in ten steps (the ResNet below: float32's 1e-7 became 3.6e-2 by step 10), so
1e-6 holds for tens of steps, while a learning rate off by 10% or a dropped step
differ by 1e-4 and more from the second step. The runs keep their own precision choice
in this mode (autocast leaves float64 alone), so a migration that changed the
precision is caught by the precision check of the diagnosis instead.

Tolerances by precision when the runs compute as written (``--precision native``, a
TPU, a saved GPU trace) (``|migrated - reference| <= atol + rtol * |reference|`` at
every step), measured here with ``make bench`` (benchmarks/bench_verify.py) and the
end-to-end tests on the bundled examples:
- float32: rtol 1e-4, atol 1e-5. XLA fuses and reorders float32 arithmetic, so losses
  drift from eager by rounding that grows over the steps. Measured over 8 optimizer
  steps: the CNN, DCGAN and Trainer examples and a hand migration stay within 2e-7
  relative, the small GPT (SGD, 16 backward passes) reaches 3.6e-5; 1e-4 leaves room
  for that while a learning rate off by 20%, a dropped optimizer step or a missing
  zero_grad (1e-3 and more from the second step, tests/test_verify_breakages.py) still fail.
  Adam is the known exception: its first update is lr * sign(grad), so near-zero
  gradients turn rounding into whole-lr differences (the GPT with AdamW: 4e-3).
- bfloat16 / float16: rtol 5e-2, atol 1e-2. bfloat16 keeps 8 bits of mantissa (a
  relative rounding step of 2**-8 = 0.4% per operation), and float16 AMP (reference)
  against bfloat16 (migration) differ by about that at every op. Measured over 8
  steps: 3e-4 (MLP) and 1.8e-3 (ResNet with BatchNorm) relative, and 9.8e-3 by step 4 in a
  recipe with mixup and label smoothing (tests/scripts/mixup_amp_recipe.py), where a 10 %
  learning rate is 3e-2 apart at step 2: no tolerance tells them apart for every training,
  so these steps do not decide (below).

Which steps decide (DECIDING_RTOL): a tolerance that grows without bound (the twin's, on a
chaotic training) accepts anything: 180 % accepts a learning rate of zero. A step decides
the verdict only where its relative tolerance is at most DECIDING_RTOL, 1e-2, the loss change
the sabotages of the suite make by their second step where the tolerance is loosest: a 10 %
learning rate moves the loss at step 2 by 2.7e-2 (the ResNet-18 at 64x64, whose calibrated
tolerance there is 9.5e-3), 3.0e-2 (pytorch/examples' ImageNet) and 3.0e-2 (the mixup
recipe), a dropped ``zero_grad`` by more; a missing sync, a dropped optimizer step and
bfloat16 where float32 was meant are the diagnosis's to catch, whatever the tolerance. A
``match`` needs MIN_DECIDING_STEPS such steps (or every step, when fewer were asked for): with
fewer, the harness decides in float64 where it can, and the verdict is ``inconclusive`` where
it cannot (harness.verify, reruns.decided_in_float64). A tolerance the user gives decides every step: it is theirs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from migrate_xla.verify.diagnosis import Finding, diagnose
from migrate_xla.verify.sharding_report import render as render_sharding_report
from migrate_xla.verify.tpu_render import render as render_tpu_report

FLOAT64_TOLERANCE = (1e-6, 1e-9)
# Where float64 costs too much (large convolutional models, float64_budget.FLOAT64_CONV_BUDGET) the
# runs compute as written, and a twin of the reference does the same float32 training rounded
# as XLA rounds it: batch norm's statistics in one pass, E[x^2] - E[x]^2, as XLA expands
# BatchNormTraining, and 2-d convolutions summed in another order (oneDNN's channels-last
# kernels) (child/twin.py). How far that alone carries the training is the tolerance: at
# each step TWIN_FACTOR times the twin's largest relative drift so far (never below the
# float32 one). Measured at step 2 (relative loss differences against the reference, one
# thread a run):
#                                     XLA (correct)  twin     one-pass BN  no oneDNN  lr +10%
# resnet18_generated.py 64x64         2.4e-3         6.3e-4   6.3e-4       3.7e-7     2.7e-2
# resnet18_generated.py 224x224       1.2e-4         2.2e-5   3.9e-5       5.1e-5     1.3e-3
# pytorch/examples imagenet --dummy   1.1e-4         9.6e-5   3.6e-5       1.9e-5     3.0e-2
# pytorch/examples siamese_network    2.0e-4         5.3e-4   2.9e-7       5.6e-4
# (the ResNet-18s: SGD lr 0.1, momentum 0.9, batches of 8, the first memorizing one batch;
# the siamese network: Adadelta lr 1.0, batches of 32 of 28x28). Batch norm alone or other
# convolution kernels alone each miss one of them by three orders of magnitude (XLA differs
# from eager in both). The factor must lie between 5.5 (the 224x224 migration) and 43 (its
# learning rate and the 64x64 one); 15 leaves the thinnest margins 2.8 times both ways. With
# oneDNN off instead of channels-last the twin cost 1.4 times the reference and the bounds
# were 7.6 to 11.8. Past their first steps such trainings are chaotic (the 224x224 one
# drifts 1e-2 by step 3): only float64 (--precision float64, at its cost) tells more.
TWIN_FACTOR = 15.0
# What the verdict of a TorchTPU migration's emulated run says, and what it cannot (the report
# and docs/verify.md): the migrated run is eager PyTorch on the CPU with the "tpu" device
# emulated (child/tpu_emulation.py), not TorchTPU.
TPU_EMULATION_SCOPE = {
    "proves": (
        "the migration's logic: devices, dtypes and autocast, the model's parameters, the optimizer "
        "steps, the loss at every step (eager PyTorch on the CPU, the tpu device and torch.tpu emulated)"
    ),
    "needs_a_tpu": (
        "TorchTPU's own kernels and compiler (torch.compile backend 'tpu'), its bfloat16 numerics, "
        "collectives and memory, and whether moving a module to the device replaces its parameters "
        "(the emulated move keeps them)"
    ),
    "skipped": (
        "PyTorch/XLA's graph checks (graph executions and compilations, steps cut into graphs, "
        "recompilations, CPU fallbacks): TorchTPU runs eagerly"
    ),
}
DECIDING_RTOL = 1e-2
# Steps 1 (the model and the data, before any update) and 2 and 3 (the first updates): a
# learning rate shows from step 2.
MIN_DECIDING_STEPS = 3
TOLERANCES = {
    "float32": (1e-4, 1e-5),
    "bfloat16": (5e-2, 1e-2),
    "float16": (5e-2, 1e-2),
}
VERDICT_EXIT_CODES = {"match": 0, "mismatch": 1, "error": 2, "inconclusive": 3}


def tolerance_for(*precisions: str) -> tuple[float, float]:
    """The loosest tolerance among the precisions the two runs used."""
    pairs = [TOLERANCES.get(p, TOLERANCES["float32"]) for p in precisions]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


@dataclass
class Run:
    """One child run as the harness saw it (or a saved reference trace)."""

    role: str
    device: str = ""
    losses: list[float] = field(default_factory=list)
    precision: str = "float32"
    float64: bool = False
    error: str | None = None
    stderr_tail: str = ""
    returncode: int | None = None
    finished: str = ""  # how its recorder ended: "step-limit" when the harness stopped it
    steps_done: int = 0
    wall_s: float = 0.0
    parameters: dict | None = None  # count, tied groups, optimizer coverage (child/recorder.py)
    seeded_by_script: list[str] | None = None  # what the script seeded itself: torch, random, numpy
    tensors_by_step: list[dict] = field(default_factory=list)  # with --diagnose: norms by name
    # with --diagnose: each op on the autograd path, step by step (child/op_records.py)
    ops_by_step: list[list[dict]] = field(default_factory=list)
    compilations: int | None = None
    recompilations: int | None = None
    executions: int | None = None
    compilations_by_step: list[int] = field(default_factory=list)
    executions_by_step: list[int] = field(default_factory=list)
    compile_causes: list[dict] = field(default_factory=list)
    execution_causes: list[dict] = field(default_factory=list)  # each graph execution's cause, as compile_causes
    stop_compilations: int = 0  # graphs verify's own sync compiled when it stopped the run (recorder.finish)
    # where a crashed run left the user's code: file, line, function, exception (child_output.crash_site)
    crash_site: dict | None = None
    float64_cost: int | None = None  # stopped in float64: convolution multiply-adds (products at 1/12) past the budget
    cpu_fallback_ops: dict[str, int] = field(default_factory=dict)
    runtime: str | None = None  # the migrated run's: torch-xla, or torch-tpu (emulated on the CPU)
    # each torch.compile call: file, line, backend, how it ran ("eagerly", "compiled", "refused"; child/compiled.py)
    compiled: list[dict] = field(default_factory=list)
    # the XLA run's capture of one step for the TPU report, its graphs read (tpu_graphs.collect)
    tpu_capture: dict | None = None
    sharding: dict | None = None  # an SPMD run's layouts and collectives (sharding_report.collect)

    @property
    def emulates_tpu(self) -> bool:
        return self.runtime == "torch-tpu"


@dataclass
class Result:
    verdict: str  # "match", "mismatch", "error" or "inconclusive" (VERDICT_EXIT_CODES)
    reference: Run
    migrated: Run
    rtol: float
    atol: float
    steps_compared: int = 0
    # the steps compared whose tolerance could catch a wrong migration (rtol <= DECIDING_RTOL, or
    # one given): the verdict holds over them
    steps_deciding: int = 0
    max_abs_diff: float = 0.0
    max_rel_diff: float = 0.0
    first_mismatch: int | None = None  # 1-based step
    message: str = ""
    seed: int | None = None
    tolerance_source: str = ""
    diagnosis: list[Finding] = field(default_factory=list)
    python: Any = None  # the Interpreter both runs used (interpreter.py)
    rtol_by_step: list[float] = field(default_factory=list)  # calibrated by the twin, where one ran
    twin_losses: list[float] = field(default_factory=list)  # the twin's, where one ran
    runtime: str | None = None  # what the script was migrated for: torch-xla or torch-tpu
    # an instrument the runs went without, the original failing under it (reruns.py):
    # {"instrument", "run", "error"}; None: every instrument kept
    dropped_instrument: dict | None = None
    tpu_report: dict | None = None  # what a TPU would make of the migrated run's graphs (tpu_report.build)

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT_CODES[self.verdict]

    def to_dict(self) -> dict:
        def run(r: Run, xla: bool) -> dict:
            out = {"device": r.device, "losses": r.losses, "precision": r.precision}
            if xla:
                out.update(
                    compilations=r.compilations,
                    recompilations=r.recompilations,
                    executions=r.executions,
                    cpu_fallback_ops=r.cpu_fallback_ops,
                )
            if r.compiled:
                out["compiled"] = r.compiled
            if r.error:
                out["error"] = r.error
            return out

        scope = {"scope": TPU_EMULATION_SCOPE} if self.migrated.emulates_tpu else {}
        return {
            "verdict": self.verdict,
            "runtime": self.runtime,
            "dropped_instrument": self.dropped_instrument,
            **scope,
            "steps_compared": self.steps_compared,
            "steps_deciding": self.steps_deciding,
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "tolerance": {
                "rtol": self.rtol,
                "atol": self.atol,
                "source": self.tolerance_source,
                "deciding_rtol": DECIDING_RTOL,
                **({"rtol_by_step": self.rtol_by_step, "twin_losses": self.twin_losses} if self.rtol_by_step else {}),
            },
            "first_mismatch": self.first_mismatch,
            "message": self.message,
            "seed": self.seed,
            "python": self.python.to_dict() if self.python else None,
            "seeded_by_script": self.reference.seeded_by_script,
            "parameters": {"reference": self.reference.parameters, "migrated": self.migrated.parameters},
            "diagnosis": [f.to_dict() for f in self.diagnosis],
            "reference": run(self.reference, False),
            "migrated": run(self.migrated, True),
            "tpu_report": self.tpu_report,
            "sharding": self.migrated.sharding,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def compare(
    reference: Run,
    migrated: Run,
    rtol: float | None = None,
    atol: float | None = None,
    float64: bool = False,
    seed: int | None = None,
    twin: Run | None = None,
) -> Result:
    if float64:
        default_rtol, default_atol = FLOAT64_TOLERANCE
        source = "float64: both runs computed in float64"
    else:
        default_rtol, default_atol = tolerance_for(reference.precision, migrated.precision)
        source = f"by precision ({reference.precision} reference, {migrated.precision} migrated)"
    given = rtol is not None or atol is not None
    if given:
        source = "given (--rtol/--atol)"
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    result = Result("error", reference, migrated, rtol, atol, seed=seed, tolerance_source=source)
    if twin is not None and not twin.error and rtol is default_rtol:
        result.twin_losses = twin.losses
        result.rtol_by_step = _calibrated(reference.losses, twin.losses, rtol)
        result.tolerance_source = (
            f"calibrated: {TWIN_FACTOR:g} times the drift of a twin of the reference rounded as XLA rounds "
            f"(batch norm statistics in one pass, convolutions summed in another order) (rtol {', '.join(f'{r:.2g}' for r in result.rtol_by_step)} by step)"
        )
    _compare_losses(result)
    # a tolerance the user gives decides every step: it is theirs
    bounded = [given or _rtol_at(result, i) <= DECIDING_RTOL for i in range(result.steps_compared)]
    result.steps_deciding = bounded.index(False) if False in bounded else result.steps_compared
    result.diagnosis = diagnose(result)
    failed = next((run for run in (reference, migrated) if run.error), None)
    bad = [(run, i) for run in (reference, migrated) for i, v in enumerate(run.losses) if not _finite(v)][:1]
    if failed is not None:
        result.message = f"the {failed.role} run failed: {failed.error}"
        if result.steps_compared:
            agree = "agree" if result.first_mismatch is None else f"diverge at step {result.first_mismatch}"
            result.message += f" (the {result.steps_compared} steps both recorded {agree})"
    elif bad:
        run, i = bad[0]
        result.message = f"the {run.role} run's loss is {run.losses[i]} at step {i + 1}"
    elif result.first_mismatch is not None:
        result.verdict = "mismatch"
        i = result.first_mismatch - 1
        result.message = (
            f"losses diverge at step {result.first_mismatch}: reference {reference.losses[i]:.6g}, "
            f"migrated {migrated.losses[i]:.6g} ({_tolerance_at(result, i)} there)"
        )
    elif len(reference.losses) != len(migrated.losses):
        result.verdict = "mismatch"
        result.message = (
            f"the reference recorded {len(reference.losses)} losses, the migrated run "
            f"{len(migrated.losses)}: the runs did not do the same number of backward passes"
        )
    elif any(f.blocking for f in result.diagnosis):
        result.verdict = "mismatch"
        result.message = f"{result.steps_compared} losses agree, but: " + "; ".join(
            f.message for f in result.diagnosis if f.blocking
        )
    elif result.steps_deciding < min(MIN_DECIDING_STEPS, result.steps_compared):
        result.verdict = "inconclusive"
        result.message = (
            f"{result.steps_compared} losses agree within {_tolerance(result)}, but only {result.steps_deciding} "
            f"of those steps had a tolerance of at most rtol {DECIDING_RTOL:g}, under which a wrong migration (a 10 % "
            f"learning rate) still shows: a verdict needs {min(MIN_DECIDING_STEPS, result.steps_compared)}"
        )
    else:
        result.verdict = "match"
        result.message = f"{result.steps_compared} losses agree within {_tolerance(result)}"
        if result.steps_deciding < result.steps_compared:
            result.message += (
                f"; the match holds over the first {result.steps_deciding}, whose tolerance was at most rtol "
                f"{DECIDING_RTOL:g} (the later steps' could not catch a 10 % learning rate)"
            )
    return result


def _tolerance(result: Result) -> str:
    """The tolerance that decided, in words: the twin's calibration by step where one ran."""
    if not result.rtol_by_step:
        return f"rtol {result.rtol:g}, atol {result.atol:g}"
    steps = result.rtol_by_step[: result.steps_compared] or result.rtol_by_step
    return f"the tolerance calibrated by the twin (rtol {min(steps):.2g} to {max(steps):.2g} by step, atol {result.atol:g})"


def _tolerance_at(result: Result, i: int) -> str:
    """The tolerance at step ``i`` (0-based), in words."""
    calibrated = "calibrated " if i < len(result.rtol_by_step) else ""
    return f"{calibrated}rtol {_rtol_at(result, i):.2g}, atol {result.atol:g}"


def _rtol_at(result: Result, i: int) -> float:
    """The relative tolerance at step ``i`` (0-based): the twin's calibration where one ran."""
    return result.rtol_by_step[i] if i < len(result.rtol_by_step) else result.rtol


def _compare_losses(result: Result) -> None:
    """Step by step over the steps both runs recorded (a failed run's too)."""
    reference, migrated = result.reference.losses, result.migrated.losses
    for i in range(min(len(reference), len(migrated))):
        ref, mig = reference[i], migrated[i]
        if not (_finite(ref) and _finite(mig)):
            break
        result.steps_compared = i + 1
        rtol = _rtol_at(result, i)
        diff = abs(mig - ref)
        result.max_abs_diff = max(result.max_abs_diff, diff)
        result.max_rel_diff = max(result.max_rel_diff, diff / abs(ref) if ref else (0.0 if diff == 0 else math.inf))
        if result.first_mismatch is None and diff > result.atol + rtol * abs(ref):
            result.first_mismatch = i + 1


def _calibrated(reference: list, twin: list, floor: float) -> list[float]:
    """The relative tolerance step by step: TWIN_FACTOR times the twin's largest drift so far."""
    by_step, drift = [], 0.0
    for ref, other in zip(reference, twin):
        if _finite(ref) and _finite(other) and ref:
            drift = max(drift, abs(other - ref) / abs(ref))
        by_step.append(max(floor, TWIN_FACTOR * drift))
    return by_step


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def table(result: Result) -> str:
    ref, mig = result.reference, result.migrated
    lines = [
        f"reference: {ref.device or '-'}    migrated: {mig.device or '-'}",
        *([f"python: {result.python.summary()}"] if result.python else []),
        *(
            [
                f"TorchTPU emulated: a match proves {TPU_EMULATION_SCOPE['proves']}",
                f"  only a run on a TPU proves {TPU_EMULATION_SCOPE['needs_a_tpu']}",
                f"  not checked: {TPU_EMULATION_SCOPE['skipped']}",
            ]
            if mig.emulates_tpu
            else []
        ),
        f"seed {result.seed}; tolerance rtol {result.rtol:g}, atol {result.atol:g}: {result.tolerance_source}",
        *(
            [
                f"{result.dropped_instrument['instrument']} dropped: under it the {result.dropped_instrument['run']} "
                f"run failed ({result.dropped_instrument['error']}"
                + (f" at {result.dropped_instrument['at']}" if result.dropped_instrument.get("at") else "")
                + "), verify's failure, not the script's: both ran "
                "without it"
            ]
            if result.dropped_instrument
            else []
        ),
        f"{'step':>4}  {'reference':>14}  {'migrated':>14}  {'abs diff':>9}  {'rel diff':>9}",
    ]
    for i in range(max(len(ref.losses), len(mig.losses))):
        r = ref.losses[i] if i < len(ref.losses) else None
        m = mig.losses[i] if i < len(mig.losses) else None
        if _finite(r) and _finite(m):
            diff = abs(m - r)
            rel = diff / abs(r) if r else 0.0
            mark = "  <- first divergence" if result.first_mismatch == i + 1 else ""
            lines.append(f"{i + 1:>4}  {r:>14.7g}  {m:>14.7g}  {diff:>9.2e}  {rel:>9.2e}{mark}")
        else:
            lines.append(f"{i + 1:>4}  {_cell(r):>14}  {_cell(m):>14}")
    lines.append("")
    lines.append(f"verdict: {result.verdict}: {result.message}")
    for run in (ref, mig):
        if run.error and run.stderr_tail:
            lines.append(f"--- {run.role} stderr (its last exception and last lines) ---")
            lines.append(run.stderr_tail.rstrip())
    if mig.compilations is not None and not mig.error:
        lines.append(
            f"XLA: {mig.compilations} compilations, {mig.recompilations} in the second half of the steps, "
            f"{mig.executions} executions, {len(mig.cpu_fallback_ops)} ops fell back to the CPU"
        )
    if result.diagnosis:
        lines.append("diagnosis:")
        for finding in result.diagnosis:
            rule = f" [{finding.rule}]" if finding.rule else ""
            lines.append(f"  {finding.kind}: {finding.message}{rule}")
    lines += render_tpu_report(result.tpu_report)
    lines += render_sharding_report(result.migrated.sharding)
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:.7g}" if isinstance(value, float) else str(value)
