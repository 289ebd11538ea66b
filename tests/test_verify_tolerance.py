"""Equal starting points and a verdict that knows float32: seeds, float64 mode and its budgets,
the tolerance a twin of the reference calibrates, the first differing tensor or operation, and
a run that compiles anew at every step stopped with a finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_verify
from migrate_xla.verify import Settings, float64_budget, harness, verify
from migrate_xla.verify.harness import record_reference
from verify_helpers import SCRIPTS, migrated_copy

# -- equal starting points, a verdict that knows float32, bounded runs, a diagnosis ----------


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, seeded", [([], []), (["--seed-random"], ["random", "torch"])], ids=["unseeded", "random-seeded"]
)
def test_scripts_that_seed_from_random_or_not_at_all_start_both_runs_alike(args, seeded):
    result = verify(SCRIPTS / "unseeded_pairs.py", args, Settings(steps=5))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.max_rel_diff < 1e-9 and result.seed == 0
    assert result.reference.seeded_by_script == seeded
    assert any(f.kind == "unseeded" for f in result.diagnosis) == (not seeded)


@pytest.mark.slow
def test_the_seed_is_the_one_both_runs_start_from(tmp_path):
    losses = [
        record_reference(
            SCRIPTS / "unseeded_pairs.py", [], Settings(steps=2, seed=seed), tmp_path / f"{seed}.json"
        ).losses
        for seed in (0, 0, 1)
    ]
    assert losses[0] == losses[1] != losses[2]


CHAOTIC = SCRIPTS / "chaotic_resnet.py"


@pytest.fixture(scope="module")
def chaotic_trace(tmp_path_factory) -> Path:
    trace = tmp_path_factory.mktemp("trace") / "chaotic.json"
    run = record_reference(CHAOTIC, [], Settings(steps=16, precision="float64", diagnose=True), trace)
    assert run.error is None, run.stderr_tail
    return trace


@pytest.mark.slow
def test_chaotic_float32_training_matches_in_float64_and_a_10_percent_learning_rate_does_not(tmp_path, chaotic_trace):
    """In float32 this training drifts past 1e-4 by step 11 (rounding, amplified): float64 settles it."""
    good = verify(
        CHAOTIC, [], Settings(steps=16), migrated=migrated_copy(CHAOTIC, tmp_path), reference_trace=chaotic_trace
    )
    assert good.verdict == "match", good.message
    assert good.steps_compared == 16 and good.max_rel_diff < 1e-9
    assert good.tolerance_source.startswith("float64")
    bad = verify(
        CHAOTIC,
        [],
        Settings(steps=16, diagnose=True),
        reference_trace=chaotic_trace,
        migrated=migrated_copy(CHAOTIC, tmp_path, ("default=0.1)", "default=0.11)")),
    )
    assert bad.verdict == "mismatch" and bad.first_mismatch == 2, bad.message
    first = next(f for f in bad.diagnosis if f.kind == "first-tensor")
    assert first.message.startswith("first difference at step 1: the parameter "), first.message


@pytest.mark.slow
def test_a_mismatch_as_written_is_decided_in_float64_where_only_its_cost_kept_it_off(tmp_path, monkeypatch):
    """Past the float64 budget both run as written; where they then differ past the tolerance
    (here a fixed rtol that float32 rounding alone exceeds) and float64 costs under the deciding
    budget, both run again in float64: rounding is no mismatch there, a 10 % learning rate is."""
    monkeypatch.setattr(float64_budget, "FLOAT64_CONV_BUDGET", 1_000_000)  # the CNN does ~10 M a forward pass
    monkeypatch.setattr(float64_budget, "FLOAT64_DECIDING_BUDGET", 10**9)
    monkeypatch.setattr(harness, "first_difference", lambda *args: [])  # the verdict is what is tested
    settings = Settings(steps=6, rtol=1e-7, atol=1e-9, tpu_report=False)
    good = verify(CHAOTIC, [], settings, migrated=migrated_copy(CHAOTIC, tmp_path))
    assert good.verdict == "match", good.message
    assert good.reference.float64 and good.migrated.float64
    assert (
        "float64 would cost too much" in good.tolerance_source and "as written, losses diverge" in good.tolerance_source
    )
    bad = verify(CHAOTIC, [], settings, migrated=migrated_copy(CHAOTIC, tmp_path, ("default=0.1)", "default=0.11)")))
    assert bad.verdict == "mismatch" and bad.reference.float64, bad.message


@pytest.mark.slow
def test_diagnose_names_the_backward_of_elu_as_the_first_differing_operation(tmp_path):
    """torch_xla 2.9.0 differentiates ELU wrongly for negative inputs on CPU PJRT (x + alpha for
    alpha * exp(x)): the migration is right (ELU left as written, --ignore XLA901), the forward
    agrees, ELU's backward does not."""
    result = run_verify(
        str(SCRIPTS / "elu_net.py"),
        "--steps",
        "3",
        "--diagnose",
        "--ignore",
        "XLA901",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    first = next(f for f in report["diagnosis"] if f["kind"] == "first-op")
    assert first["message"].startswith("first differing operation: the backward of elu "), first["message"]
    assert "at step 1" in first["message"] and "the gradient reaching it agrees" in first["message"]


RESNET18 = SCRIPTS / "resnet18_generated.py"


@pytest.mark.slow
def test_a_large_convolutional_model_as_written_decides_only_the_steps_whose_calibrated_tolerance_is_bounded(
    tmp_path, monkeypatch
):
    """float64 convolutions cost XLA's CPU backend ~40x: past the budget both run as written and a
    twin of the reference calibrates the tolerance. It grows with the training's chaos (to rtol 6
    by step 4 here, which a learning rate of zero passes): the correct migration is inconclusive,
    not a match, where float64 cannot decide (the test below shows where it does), and a 10%
    learning rate is still caught at step 2, where the tolerance is bounded."""
    monkeypatch.setattr(float64_budget, "FLOAT64_DECIDING_BUDGET", 0)
    monkeypatch.setattr(harness, "first_difference", lambda *args: [])  # the verdict is what is tested
    args = ["--image-size", "64"]  # 1.2 G multiply-adds in convolutions a forward pass
    good = verify(RESNET18, args, Settings(steps=4), migrated=migrated_copy(RESNET18, tmp_path))
    assert good.verdict == "inconclusive", good.message + good.migrated.stderr_tail
    assert not good.reference.float64 and "float64 would cost too much" in good.tolerance_source
    assert good.tolerance_source.startswith("calibrated") and len(good.rtol_by_step) == 4
    assert good.rtol_by_step[-1] > 0.1 and good.steps_deciding == 2 and good.exit_code == 3
    assert "only 2 of those steps had a tolerance of at most rtol 0.01" in good.message
    assert good.max_rel_diff > 1e-3  # float32 rounding past any fixed float32 tolerance
    bad = verify(
        RESNET18, args, Settings(steps=4), migrated=migrated_copy(RESNET18, tmp_path, ("default=0.1)", "default=0.11)"))
    )
    assert bad.verdict == "mismatch" and bad.first_mismatch == 2, bad.message


@pytest.mark.slow
def test_a_migrated_run_compiling_anew_at_every_step_is_stopped_with_a_finding_not_a_timeout():
    """Shapes that change every step: after three steps that each compiled, a run whose pace
    would pass --timeout stops and says so, with the line where the shapes change."""
    result = verify(SCRIPTS / "growing_shapes.py", [], Settings(steps=2000, timeout=120, tpu_report=False))
    assert result.verdict == "error" and result.migrated.error.startswith("stopped: compiled new graphs")
    assert len(result.migrated.losses) < 20 and result.migrated.wall_s < 100, result.migrated.error
    finding = next(f for f in result.diagnosis if f.kind == "recompiling")
    assert finding.file.endswith("growing_shapes.py"), finding.to_dict()


MIXUP = SCRIPTS / "mixup_amp_recipe.py"


@pytest.mark.slow
def test_a_mixed_precision_recipe_as_written_decides_nothing_and_float64_catches_a_10_percent_learning_rate(
    tmp_path, monkeypatch
):
    """torchvision's classification recipe, small (AMP, mixup/cutmix, label smoothing, EMA): past
    the float64 budget the runs go as written, float16 against bfloat16 at rtol 5e-2, which a 10 %
    learning rate (3e-2 apart at step 2) passes: that used to be a match. No step at that
    tolerance decides: float64 does, over the steps its budget allows, and where it cannot, the
    verdict is inconclusive, never a match."""
    monkeypatch.setattr(float64_budget, "FLOAT64_CONV_BUDGET", 1_000)  # the recipe does 0.9 M a forward pass
    monkeypatch.setattr(harness, "first_difference", lambda *args: [])  # the verdict is what is tested
    settings = Settings(steps=4, tpu_report=False)
    wrong_lr = ("default=0.4)", "default=0.44)")
    bad = verify(MIXUP, [], settings, migrated=migrated_copy(MIXUP, tmp_path, wrong_lr))
    assert "as written, 4 losses agree within the tolerance calibrated by the twin" in bad.tolerance_source
    assert bad.verdict == "mismatch" and bad.first_mismatch == 2 and bad.reference.float64, bad.message
    monkeypatch.setattr(float64_budget, "FLOAT64_DECIDING_BUDGET", 1_000)
    undecided = run_verify(
        str(MIXUP), "--steps", "4", "--no-tpu-report", "--migrated", str(migrated_copy(MIXUP, tmp_path, wrong_lr))
    )
    assert undecided.exit_code == 3, undecided.output
    assert "verdict: inconclusive: 4 losses agree" in undecided.output
    assert "past the 1e-06 G float64 may take to decide" in undecided.output
    assert "To decide: --precision float64" in undecided.output
