"""What a verdict says, from the runs' records alone (no child process): the tolerance that
decided, a migrated run that never touched the device, and what is slow rather than wrong
(issue 30, items 5 and 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate_xla.verify.child_output import compile_causes, crash_site
from migrate_xla.verify.compare import DECIDING_RTOL, TOLERANCES, Run, compare
from migrate_xla.verify.diagnosis import _parameters
from migrate_xla.verify.progress import RECOMPILING, RecompilingWatch

LOSSES = [2.0, 1.8, 1.6, 1.5, 1.4, 1.3]
SYNC = "user torch_xla.sync"
READ = "most likely user code trying to access tensor value before torch_xla.sync"


def xla_run(**fields) -> Run:
    defaults = {
        "losses": LOSSES,
        "steps_done": 6,
        "compilations": 2,
        "executions": 6,
        "compilations_by_step": [1, 2, 2, 2, 2, 2],
        "executions_by_step": [1, 2, 3, 4, 5, 6],
    }
    return Run("migrated", device="xla (CPU)", **{**defaults, **fields})


def reference(losses=LOSSES) -> Run:
    return Run("reference", device="cpu (cuda emulated)", losses=losses, steps_done=len(losses))


def test_a_migrated_run_on_the_xla_device_matches():
    result = compare(reference(), xla_run())
    assert result.verdict == "match" and result.message == "6 losses agree within rtol 0.0001, atol 1e-05"


def test_a_migrated_run_that_compiled_and_ran_nothing_on_xla_is_not_a_match():
    result = compare(reference(), xla_run(compilations=0, executions=0, compilations_by_step=[], executions_by_step=[]))
    assert result.verdict == "mismatch"
    assert result.message.startswith("6 losses agree, but: the migrated run never ran on the XLA device")


def test_the_twins_tolerance_is_named_where_it_decided():
    twin = Run("twin", losses=[x * (1 + 3e-4) for x in LOSSES])
    migrated = xla_run(losses=[x * (1 + 2e-4) for x in LOSSES])
    result = compare(reference(), migrated, twin=twin)
    assert result.verdict == "match"
    assert "the tolerance calibrated by the twin (rtol" in result.message and "rtol 0.0001" not in result.message


def twin_drifting(drifts: list[float]) -> Run:
    """A twin whose relative drift from the reference is ``drifts`` step by step."""
    return Run("twin", losses=[x * (1 + d) for x, d in zip(LOSSES, drifts)])


def test_a_twin_tolerance_past_the_bound_from_the_second_step_is_inconclusive_not_a_match():
    """A chaotic training's twin drifts 4e-3 at step 2: its calibrated tolerance (6e-2) would
    accept a learning rate 10 % off (here 5 % apart at step 2): steps past rtol 1e-2 do not decide."""
    twin = twin_drifting([1e-6, 4e-3, 2e-2, 5e-2, 0.1, 0.12])
    wrong_lr = xla_run(losses=[LOSSES[0], *(x * (1 + 0.05) for x in LOSSES[1:])])
    result = compare(reference(), wrong_lr, twin=twin)
    assert result.rtol_by_step[1] > 5e-2  # today's tolerance lets it through
    assert result.verdict == "inconclusive" and result.exit_code == 3
    assert result.steps_deciding == 1 and result.steps_compared == 6
    assert "only 1 of those steps had a tolerance of at most rtol 0.01" in result.message
    assert result.to_dict()["steps_deciding"] == 1 and result.to_dict()["tolerance"]["deciding_rtol"] == DECIDING_RTOL


def test_a_match_says_over_how_many_steps_it_holds():
    twin = twin_drifting([1e-6, 1e-5, 1e-4, 5e-4, 5e-3, 1e-2])
    result = compare(reference(), xla_run(losses=[x * (1 + 1e-5) for x in LOSSES]), twin=twin)
    assert result.verdict == "match" and result.steps_deciding == 4
    assert result.message.endswith(
        "the match holds over the first 4, whose tolerance was at most rtol 0.01 (the later steps' could not "
        "catch a 10 % learning rate)"
    )
    full = compare(reference(), xla_run())
    assert full.steps_deciding == 6 and "holds over" not in full.message


def test_fewer_steps_asked_for_than_a_verdict_needs_decide_alone():
    two = LOSSES[:2]
    result = compare(reference(two), xla_run(losses=two, steps_done=2), twin=twin_drifting([1e-6, 1e-4]))
    assert result.verdict == "match" and result.steps_deciding == 2


def test_a_tolerance_given_by_the_user_decides_every_step():
    result = compare(reference(), xla_run(losses=[x * 1.03 for x in LOSSES]), rtol=0.05)
    assert result.verdict == "match" and result.steps_deciding == 6


def test_mixed_precision_runs_compared_as_written_decide_nothing():
    """float16 against bfloat16 drift apart as far as a wrong learning rate moves the loss."""
    assert TOLERANCES["float32"][0] <= DECIDING_RTOL < TOLERANCES["bfloat16"][0]
    float16 = Run("reference", device="cpu (cuda emulated)", losses=LOSSES, steps_done=6, precision="float16")
    result = compare(float16, xla_run(losses=[x * 1.02 for x in LOSSES], precision="bfloat16"))
    assert result.verdict == "inconclusive" and result.steps_deciding == 0


def test_a_new_graph_every_step_from_a_read_and_a_sync_is_slow_not_wrong():
    """pytorch-made: a loss read before backward and a slice by the step's number; every step is cut."""
    causes = [
        {"cause": cause, "file": "run.py", "line": line} for _ in range(6) for cause, line in ((READ, 43), (SYNC, 50))
    ]
    migrated = xla_run(
        compilations=12,
        executions=12,
        recompilations=6,
        compilations_by_step=[2, 4, 6, 8, 10, 12],
        executions_by_step=[2, 4, 6, 8, 10, 12],
        compile_causes=causes,
    )
    result = compare(reference(), migrated)
    assert result.verdict == "match"
    kinds = {f.kind: f for f in result.diagnosis}
    assert "steps-not-cut" not in kinds and not any(f.blocking for f in result.diagnosis)
    assert kinds["host-read"].line == 43 and kinds["host-read"].rule == "XLA202"
    assert "recompilation" in kinds


def test_a_read_in_every_step_is_named_and_a_read_once_before_training_is_not():
    """From the executions each read ran: a loss read before backward runs a graph every step; a
    model copied to the CPU to log its graph (XLA903's add_graph) runs one, once."""
    every_step = [{"cause": READ, "file": "train.py", "line": 71} for _ in range(6)]
    syncs = [{"cause": SYNC, "file": "train.py", "line": 75} for _ in range(6)]
    once = [{"cause": READ, "file": "train.py", "line": 60}]
    slow = compare(reference(), xla_run(execution_causes=once + every_step + syncs))
    found = [f for f in slow.diagnosis if f.kind == "host-read"]
    assert slow.verdict == "match" and [(f.line, f.rule) for f in found] == [(71, "XLA202")]
    assert "6 of the run's 13 graph executions ran there" in found[0].message
    quiet = compare(reference(), xla_run(execution_causes=once + syncs))
    assert quiet.verdict == "match" and "host-read" not in {f.kind for f in quiet.diagnosis}


def test_late_graphs_compiled_at_the_steps_sync_are_recompilations_even_where_the_debug_file_missed_some():
    """locuslab/TCN with weight_norm on the CPU: a new graph every step, compiled at the step's sync;
    torch_xla's debug file told fewer compilations than its counters (its causes are not indexed
    by the counts), so the late ones are the last causes."""
    causes = [{"cause": SYNC, "file": "train.py", "line": 139} for _ in range(4)]
    migrated = xla_run(
        compilations=6,
        executions=12,
        compilations_by_step=[1, 2, 3, 4, 5, 6],
        executions_by_step=[2, 4, 6, 8, 10, 12],
        compile_causes=causes,
    )
    result = compare(reference(), migrated)
    assert result.verdict == "match" and "steps-not-cut" not in {f.kind for f in result.diagnosis}


def test_a_graph_that_grows_with_no_sync_is_still_a_mismatch():
    causes = [{"cause": READ, "file": "run.py", "line": 43} for _ in range(6)]
    migrated = xla_run(
        compilations=6,
        executions=6,
        compilations_by_step=[1, 2, 3, 4, 5, 6],
        executions_by_step=[1, 2, 3, 4, 5, 6],
        compile_causes=causes,
    )
    result = compare(reference(), migrated)
    assert result.verdict == "mismatch" and "steps-not-cut" in {f.kind for f in result.diagnosis}


def test_weight_norm_parts_tied_under_either_weight_norm_are_the_same_ties():
    """XLA113 makes torch.nn.utils.weight_norm the parametrization: its parts are renamed, not untied
    (locuslab/TCN registers each weight-normed conv twice)."""
    params = {"tensors": 2, "numel": 10, "optimizers": 1}
    ref = {**params, "tied": [["block.conv1.weight_g", "block.net.0.weight_g"]]}
    mig = {
        **params,
        "tied": [["block.conv1.parametrizations.weight.original0", "block.net.0.parametrizations.weight.original0"]],
    }
    assert _parameters(ref, mig) == []
    apart = {
        **mig,
        "tied": [["block.conv1.parametrizations.weight.original1", "block.net.0.parametrizations.weight.original0"]],
    }
    assert [f.kind for f in _parameters(ref, apart)] == ["parameters"]


def _debug_block(kind: str, cause: str, frames: list[str]) -> str:
    """One block of torch_xla's PT_XLA_DEBUG_LEVEL=2 file, as 2.9 writes it."""
    lines = [
        f"{kind} Cause",
        f"  {cause}",
        "Graph Info: ",
        "  Graph Hash: f5764cba",
        "Python Frame Triggered Execution: ",
    ]
    lines += [f"  {frame}" for frame in frames] + ["-" * 80, "=" * 80]
    return "".join(f"{kind} Analysis: {line}\n" for line in lines)


def test_the_debug_file_gives_each_compilation_and_each_execution_its_users_line():
    torch_frame = "_apply (/v/lib/python3.11/site-packages/torch/nn/modules/module.py:1022)"
    read = [torch_frame, "main (/w/train.py:64)", "<module> (/w/train.py:83)"]
    sync = ["sync (/v/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)", "main (/w/train.py:75)"]
    text = (
        _debug_block("Compilation", READ, read)
        + _debug_block("Execution", READ, read)
        + _debug_block("Compilation", SYNC, sync)
        + _debug_block("Execution", SYNC, sync)
        + _debug_block("Execution", SYNC, sync)
    )
    script = Path("/w/train.py")
    assert [(c["cause"], c["line"]) for c in compile_causes(text, script)] == [(READ, 64), (SYNC, 75)]
    assert [c["line"] for c in compile_causes(text, script, "Execution")] == [64, 75, 75]


TIMM_TRACEBACK = """Traceback (most recent call last):
  File "/w/train.py", line 40, in <module>
    x, y = mixup_fn(x, y)
  File "{site}/timm/data/mixup.py", line 217, in __call__
    target = mixup_target(target, self.num_classes, lam, self.label_smoothing)
  File "{site}/timm/data/mixup.py", line 25, in mixup_target
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value, device=device)
  File "{site}/timm/data/mixup.py", line 16, in one_hot
    return torch.full((x.size()[0], num_classes), off_value, device=device).scatter_(1, x, on_value)
  File "{torch_site}/torch/cuda/__init__.py", line 372, in _lazy_init
    torch._C._cuda_init()
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver
"""


@pytest.mark.parametrize("installed", ["lib/python3.11/site-packages", "vendor"], ids=["site-packages", "target"])
def test_cuda_hard_coded_in_a_library_is_said_to_be_the_librarys_with_its_version_and_fix(installed, tmp_path):
    """An older timm's Mixup made its targets on device='cuda': the migrated script is right, the
    library is not; not "CUDA code left in the migration", which --check would not show. Installed
    in site-packages, or with ``pip install --target DIR`` (DeiT's timm 0.4.12 on PYTHONPATH)."""
    site = tmp_path / installed
    (site / "timm-0.4.12.dist-info").mkdir(parents=True)
    torch_site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    crash = crash_site(TIMM_TRACEBACK.format(site=site, torch_site=torch_site))
    assert (crash["file"], crash["line"]) == ("/w/train.py", 40)
    assert crash["library"] == {
        "name": "timm",
        "version": "0.4.12",
        "path": "timm/data/mixup.py",
        "line": 16,
        "function": "one_hot",
    }
    result = compare(reference(), xla_run(losses=[], error="exit status 1", crash_site=crash))
    finding = next(f for f in result.diagnosis if f.kind == "crash")
    assert finding.rule is None and (finding.file, finding.line) == ("/w/train.py", 40)
    assert "CUDA hard-coded in the library timm 0.4.12 (timm/data/mixup.py:16, in one_hot)" in finding.message
    assert "until timm 0.5.4" in finding.message and "left in the migration" not in finding.message


def test_a_crash_where_a_fix_was_held_back_names_its_rule_and_unsafe_fixes():
    sparse = {
        "exception": "NotImplementedError: Could not run 'aten::mm' with arguments from the 'SparseXLA' backend.",
        "file": "/w/train.py",
        "line": 77,
        "function": "forward",
    }
    result = compare(reference(), xla_run(losses=[], error="exit status 1", crash_site=sparse))
    finding = next(f for f in result.diagnosis if f.kind == "crash")
    assert finding.rule == "XLA902" and "--unsafe-fixes applies it" in finding.message, finding.message


def test_a_run_that_compiles_anew_at_every_step_stops_where_it_would_pass_the_timeout():
    watch = RecompilingWatch(max_steps=10, timeout=600)
    assert watch.why_stop({"steps": 1, "compilations": 60}, 150) is None
    assert watch.why_stop({"steps": 2, "compilations": 120}, 300) is None
    assert watch.why_stop({"steps": 3, "compilations": 180}, 450) is None
    why = watch.why_stop({"steps": 4, "compilations": 240}, 600)
    assert why.startswith(RECOMPILING) and "10 steps would take about 1500 s, past --timeout 600 s" in why


def test_a_run_that_settles_or_finishes_in_time_is_never_stopped():
    settling = RecompilingWatch(max_steps=10, timeout=600)
    for steps, compilations in [(1, 4), (2, 6), (3, 6), (4, 6)]:
        assert settling.why_stop({"steps": steps, "compilations": compilations}, 200 * steps) is None
    # the counts lag a step: the first step's graph, then the one its optimizer's new state makes
    # (timm's ResNet-18 under AMP and EMA, 62 s a step on loaded cores), then none
    slow = RecompilingWatch(max_steps=10, timeout=600)
    for steps, compilations in [(1, 0), (2, 1), (3, 2), (4, 2), (5, 2)]:
        assert slow.why_stop({"steps": steps, "compilations": compilations}, 62 * steps) is None
    quick = RecompilingWatch(max_steps=10, timeout=600)
    for steps in range(1, 6):  # a new graph every step, but 10 steps take 50 s
        assert quick.why_stop({"steps": steps, "compilations": steps}, 5 * steps) is None


def test_the_recompiling_finding_names_the_librarys_line_and_the_users_call():
    rpn = {"name": "torchvision", "version": "0.24.0", "path": "torchvision/models/detection/rpn.py", "line": 378}
    causes = [
        {"cause": SYNC, "file": "/w/train.py", "line": 88, "library": {**rpn, "function": "filter_proposals"}}
        for _ in range(6)
    ]
    error = f"{RECOMPILING}: 180 graphs by step 3, 150 s a step, so 10 steps would take about 1500 s"
    stopped = xla_run(losses=LOSSES[:3], error=error, compile_causes=causes)
    result = compare(reference(), stopped)
    assert result.verdict == "error"
    finding = next(f for f in result.diagnosis if f.kind == "recompiling")
    assert "at torchvision/models/detection/rpn.py:378 (torchvision 0.24.0; 3 of the later graphs)" in finding.message
    assert "called from /w/train.py:88" in finding.message and (finding.file, finding.line) == ("/w/train.py", 88)


def test_runs_seeded_in_different_processes_are_told_apart():
    """PyTorch's FSDP tutorial seeds its parent and trains in mp.spawn's worker; its SPMD form calls
    the worker in the parent (XLA601): the migrated run's training process is seeded, the
    reference's is not, and the diagnosis says so rather than that the script never seeds."""
    from migrate_xla.verify.diagnosis import diagnose

    result = compare(reference([2.0, 1.9]), xla_run(losses=[2.1, 1.7], seeded_by_script=["torch"]))
    result.reference.seeded_by_script, result.seed = [], 0
    kinds = {f.kind: f.message for f in diagnose(result)}
    assert "unseeded" not in kinds and "the migrated run's seeds torch in the process that trains" in kinds["seeding"]
    result.migrated.seeded_by_script = []
    kinds = {f.kind for f in diagnose(result)}
    assert "seeding" not in kinds and "unseeded" in kinds
    # a run that stopped before it trained (PyTorch's FSDP2 example refusing one GPU) says nothing of it
    result = compare(reference([]), xla_run(losses=[2.1, 1.7], seeded_by_script=["torch"]))
    result.reference.seeded_by_script = []
    assert "seeding" not in {f.kind for f in diagnose(result)}
