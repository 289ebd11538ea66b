"""Wrong migrations that verify catches and names: the tiny script sabotaged (a learning rate, a
dropped step, a missing sync, a crash), parameters untied in the move to the device, a Hogwild
trainer that cannot run on XLA.

These runs take seconds each (torch and torch_xla start in every child, XLA compiles on the
CPU), so the mismatch and error cases of the tiny script share one saved reference trace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from migrate_xla.verify import Settings, assert_loss_parity, verify
from migrate_xla.verify.harness import record_reference
from verify_helpers import SCRIPTS, TINY, migrated_copy, migrated_tiny


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory) -> Path:
    trace = tmp_path_factory.mktemp("trace") / "tiny.json"
    run = record_reference(TINY, [], Settings(steps=6, precision="float64"), trace)
    assert run.error is None, run.stderr_tail
    return trace


@pytest.mark.slow
def test_saved_reference_trace_replaces_the_reference_run(tmp_path, tiny_trace):
    trace = json.loads(tiny_trace.read_text())
    assert trace["device"] == "cpu (cuda emulated)" and len(trace["losses"]) == 6
    result = verify(TINY, [], Settings(steps=6), migrated=migrated_tiny(tmp_path), reference_trace=tiny_trace)
    assert result.verdict == "match", result.message
    assert result.reference.device.endswith("(saved trace)")


@pytest.mark.slow
@pytest.mark.parametrize(
    "breakage",
    [
        ("lr=0.05", "lr=0.055"),
        ("    optimizer.step()\n", "    pass\n"),
        ("    optimizer.zero_grad()\n", "    pass\n"),
    ],
    ids=["learning-rate-off-by-10-percent", "dropped-optimizer-step", "removed-zero-grad"],
)
def test_a_wrong_migration_is_a_mismatch(tmp_path, tiny_trace, breakage):
    result = verify(TINY, [], Settings(steps=6), migrated=migrated_tiny(tmp_path, breakage), reference_trace=tiny_trace)
    assert result.verdict == "mismatch", result.message
    assert result.exit_code == 1
    assert result.first_mismatch is not None and result.first_mismatch >= 2
    assert "diverge at step" in result.message


@pytest.mark.slow
def test_a_missing_sync_is_a_mismatch_that_names_the_cause(tmp_path, tiny_trace):
    broken = migrated_tiny(tmp_path, ("    torch_xla.sync()\n", ""))
    result = verify(TINY, [], Settings(steps=6), migrated=broken, reference_trace=tiny_trace)
    assert result.verdict == "mismatch", result.message
    assert result.max_rel_diff < 1e-9  # the losses are right: the steps are never cut into graphs
    finding = next(f for f in result.diagnosis if f.kind == "steps-not-cut")
    assert finding.blocking and finding.rule == "XLA201" and "torch_xla.sync()" in finding.message


@pytest.mark.slow
def test_assert_loss_parity_fails_with_the_table(tmp_path, tiny_trace):
    broken = migrated_tiny(tmp_path, ("lr=0.05", "lr=0.06"))
    with pytest.raises(AssertionError, match="first divergence"):
        assert_loss_parity(TINY, steps=6, migrated=broken, reference_trace=tiny_trace)


TIED = SCRIPTS / "tied_lm.py"
SWAP = "torch.__future__.set_swap_module_params_on_conversion(True)\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, cause",
    [([], "parameters"), (["--optimizer-first"], "stale-optimizer")],
    ids=["tied-weights", "optimizer-built-before-the-move"],
)
def test_parameter_identity_lost_in_the_move_is_a_mismatch_under_bfloat16_autocast(tmp_path, args, cause):
    trace = tmp_path / "tied.json"
    assert record_reference(TIED, args, Settings(steps=6, precision="float64"), trace).error is None
    good = migrated_copy(TIED, tmp_path)
    assert SWAP in good.read_text()  # the tool keeps the parameters through the move
    result = verify(TIED, args, Settings(steps=6), migrated=good, reference_trace=trace)
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.reference.parameters["tied"] == [["lm_head.weight", "wte.weight"]]
    assert result.migrated.parameters == result.reference.parameters
    assert result.migrated.precision == "bfloat16" and result.reference.precision == "float16"
    untied = migrated_copy(TIED, tmp_path, (SWAP, ""))
    result = verify(TIED, args, Settings(steps=6), migrated=untied, reference_trace=trace)
    assert result.verdict == "mismatch", result.message
    finding = next(f for f in result.diagnosis if f.kind == cause)
    assert finding.blocking and finding.rule == "XLA109", finding.message


@pytest.mark.slow
def test_a_crash_of_the_migrated_run_names_its_compilations(tmp_path, tiny_trace):
    crashing = migrated_tiny(
        tmp_path,
        (
            "    torch_xla.sync()\n",
            "    torch_xla.sync()\n    if step == 3:\n        raise MemoryError('out of executable memory')\n",
        ),
    )
    result = verify(TINY, [], Settings(steps=6), migrated=crashing, reference_trace=tiny_trace)
    assert result.verdict == "error" and "after 4 steps" in result.message, result.message
    crash = next(f for f in result.diagnosis if f.kind == "crash")
    assert crash.file == str(crashing) and crash.line is not None and "compilations" in crash.message


@pytest.mark.slow
def test_a_migrated_run_that_crashes_before_its_first_step_is_a_crash_only(tmp_path, tiny_trace):
    # a .cuda() the migration left: the run dies before it builds its model on XLA
    crashing = migrated_tiny(tmp_path, (".to(torch_xla.device())\noptimizer", ".cuda()\noptimizer"))
    result = verify(TINY, [], Settings(steps=6), migrated=crashing, reference_trace=tiny_trace)
    assert result.verdict == "error", result.message
    assert [f.kind for f in result.diagnosis] == ["crash"], [f.to_dict() for f in result.diagnosis]
    crash = result.diagnosis[0]
    line = (
        crashing.read_text()
        .splitlines()
        .index(next(x for x in crashing.read_text().splitlines() if x.endswith(".cuda()")))
    )
    assert (crash.file, crash.line) == (str(crashing), line + 1), crash.to_dict()
    assert "before its first step" in crash.message and "NVIDIA driver" in crash.message
    assert crash.rule == "XLA899"


@pytest.mark.slow
def test_a_hogwild_trainer_crashes_on_xla_where_xla611_said_it_would(tmp_path):
    """A model in shared memory cannot be migrated (XLA611, an error left for a person): verify
    shows the crash at the user's share_memory() line, with what it means and the rule."""
    script = tmp_path / "train.py"
    shutil.copy(FIXTURES / "distributed" / "hogwild_shared_model.py", script)
    result = verify(script, ["--workers", "1", "--steps", "5"], Settings(steps=4))
    assert result.verdict == "error", result.message
    crash = next(f for f in result.diagnosis if f.kind == "crash")
    assert crash.rule == "XLA611" and "shared memory" in crash.message, crash.to_dict()
    assert script.read_text().splitlines()[crash.line - 1].strip().startswith("model.share_memory()")
