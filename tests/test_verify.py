"""The verification harness end to end: real child processes on CPU PJRT.

These runs take seconds each (torch and torch_xla start in every child, XLA compiles
on the CPU), so the mismatch and error cases share one saved reference trace where
they can.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXTURES, ROOT, run_verify
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.verify import Settings, assert_loss_parity, float64_budget, harness, verify
from migrate_xla.verify.diagnosis import _steps_not_cut
from migrate_xla.verify.harness import record_reference
from migrate_xla.verify.user_lines import in_user_files

SCRIPTS = ROOT / "tests" / "scripts"
TINY = SCRIPTS / "tiny_mlp.py"


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory) -> Path:
    trace = tmp_path_factory.mktemp("trace") / "tiny.json"
    run = record_reference(TINY, [], Settings(steps=6, precision="float64"), trace)
    assert run.error is None, run.stderr_tail
    return trace


def migrated_copy(script: Path, tmp_path: Path, *breakages: tuple[str, str]) -> Path:
    """The tool's migration of ``script``, sabotaged by replacing each ``old`` with ``new``."""
    code, _ = migrate_code(script.read_text(), options_for())
    for old, new in breakages:
        assert old in code, old
        code = code.replace(old, new, 1)
    path = tmp_path / f"{script.stem}_xla.py"
    path.write_text(code)
    return path


def migrated_tiny(tmp_path: Path, breakage: tuple[str, str] | None = None) -> Path:
    return migrated_copy(TINY, tmp_path, *([breakage] if breakage else []))


@pytest.mark.slow
def test_migrated_tiny_script_matches_its_emulated_gpu_run(tmp_path):
    before = {p: p.read_bytes() for p in SCRIPTS.iterdir() if p.is_file()}
    result = run_verify(
        str(TINY), "--steps", "6", "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png")
    )
    assert result.exit_code == 0, result.output
    assert "verdict: match" in result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "match" and report["steps_compared"] == 6
    assert set(report) >= {
        "verdict",
        "steps_compared",
        "max_abs_diff",
        "max_rel_diff",
        "tolerance",
        "reference",
        "migrated",
    }
    assert report["reference"]["device"] == "cpu (cuda emulated)"
    assert report["migrated"]["device"] == "xla (CPU)"
    assert len(report["reference"]["losses"]) == len(report["migrated"]["losses"]) == 6
    assert report["migrated"]["recompilations"] == 0
    assert report["migrated"]["cpu_fallback_ops"] == {}
    assert report["max_rel_diff"] <= report["tolerance"]["rtol"]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the user's files are never modified
    assert before == {p: p.read_bytes() for p in SCRIPTS.iterdir() if p.is_file()}


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


@pytest.mark.parametrize(
    ("cause", "cut"),
    [
        ("user torch_xla.sync", True),
        ("torch_xla.sync in parallel loader at step end", True),
        ("most likely user code trying to access tensor value before torch_xla.sync", False),
    ],
)
def test_a_new_graph_each_step_is_an_uncut_step_only_where_a_read_compiled_it(cause, cut):
    """A layer-wise trainer whose sync compiles a graph for each new layer cuts its steps; a
    step whose graph a loss read compiles, bigger each step, does not."""
    from types import SimpleNamespace

    causes = [{"cause": "most likely user code trying to access tensor value before torch_xla.sync"}] * 3
    causes += [{"cause": cause}] * 3
    run = SimpleNamespace(
        compilations=6, executions=6, error=None, parameters={"optimizers": 1}, steps_done=6, losses=[1.0] * 6,
        compilations_by_step=[1, 2, 3, 4, 5, 6], executions_by_step=[1, 2, 3, 4, 5, 6], compile_causes=causes,
    )  # fmt: skip
    assert bool(_steps_not_cut(run)) is not cut


CHAR_LM = SCRIPTS / "char_lm.py"


@pytest.mark.slow
def test_a_migration_without_any_sync_is_steps_not_cut_with_the_execution_count(tmp_path):
    """A model updated by hand that reads its loss every 10 steps: without a sync, 10 steps run
    in 2 graph executions (the first loss read and the end of the run); the losses agree."""
    syncless = migrated_copy(CHAR_LM, tmp_path, ("    torch_xla.sync()\n", ""))
    result = run_verify(str(CHAR_LM), "--steps", "10", "--migrated", str(syncless))
    assert result.exit_code == 1, result.output
    assert "steps-not-cut: " in result.output and "10 steps ran in 2 graph executions" in result.output
    assert "[XLA201]" in result.output
    correct = run_verify(str(CHAR_LM), "--steps", "10", "--migrated", str(migrated_copy(CHAR_LM, tmp_path)))
    assert correct.exit_code == 0, correct.output
    assert "steps-not-cut" not in correct.output


@pytest.mark.slow
def test_assert_loss_parity_fails_with_the_table(tmp_path, tiny_trace):
    broken = migrated_tiny(tmp_path, ("lr=0.05", "lr=0.06"))
    with pytest.raises(AssertionError, match="first divergence"):
        assert_loss_parity(TINY, steps=6, migrated=broken, reference_trace=tiny_trace)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, expected",
    [
        (["--", "--crash"], "boom: the script failed on purpose"),
        (["--", "--no-backward"], "never called backward()"),
        (["--", "--nan"], "loss is nan at step 3"),
        (["--timeout", "8", "--", "--hang"], "timed out after 8 s"),
        (["--", "--exit-early"], "exited with status 3 after 3 steps (the 3 steps both recorded agree)"),
        (["--timeout", "40", "--", "--hang-late"], "timed out after 40 s (--timeout) after 3 steps (the 3 steps both"),
    ],
    ids=["crash", "no-backward", "nan", "timeout", "exit-after-some-steps", "timeout-after-some-steps"],
)
def test_failures_are_clear(args, expected, tmp_path):
    result = run_verify(str(TINY), "--steps", "5", "--migrated", str(migrated_tiny(tmp_path)), *args)
    assert result.exit_code == 2, result.output
    assert "verdict: error" in result.output
    assert expected in result.output


@pytest.mark.slow
def test_missing_script_and_needed_arguments(tmp_path):
    result = run_verify(str(tmp_path / "nowhere.py"))
    assert result.exit_code == 2 and "no such script" in result.output
    needs_args = tmp_path / "needs_args.py"
    needs_args.write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--data', required=True)\np.parse_args()\n"
    )
    result = run_verify(str(needs_args), "--timeout", "60")
    assert result.exit_code == 2
    assert "the following arguments are required: --data" in result.output


@pytest.mark.slow
def test_workers_started_by_the_script_are_instrumented():
    # mp.spawn in the original, torch_xla.launch in the migration: losses come from the workers.
    result = verify(SCRIPTS / "spawn_mlp.py", [], Settings(steps=5), migrated=SCRIPTS / "spawn_mlp_xla.py")
    assert result.verdict == "match", result.message + result.reference.stderr_tail + result.migrated.stderr_tail
    assert result.steps_compared == 5


@pytest.mark.slow
def test_sibling_modules_are_migrated_with_the_script(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "helpers.py").write_text(
        textwrap.dedent(
            """\
            import torch

            def pick_device():
                return torch.device("cuda:0")
            """
        )
    )
    (project / "train.py").write_text(
        textwrap.dedent(
            """\
            import os
            import torch
            from helpers import pick_device

            rank = int(os.environ["LOCAL_RANK"])  # torchrun-style: set by the harness
            device = pick_device()
            w = torch.ones(4, device=device, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            for _ in range(5):
                opt.zero_grad()
                loss = (w * torch.arange(4.0).to(device)).pow(2).sum()
                loss.backward()
                opt.step()
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    result = verify(project / "train.py", [], Settings(steps=4))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.migrated.device == "xla (CPU)"
    assert (project / "helpers.py").read_text().count("cuda:0") == 1  # the original is untouched


def example_args(example: Path) -> list[str]:
    """What an example's ``# verify-args: ...`` line says its user passes (``--cuda``, say)."""
    found = re.search(r"^# verify-args: (.*)$", example.read_text(), re.MULTILINE)
    return shlex.split(found.group(1)) if found else []


def example_runtimes(example: Path) -> list[str]:
    """The runtimes an example verifies on: its ``# verify-runtimes: ...`` line (a Lightning example:
    torch-xla only, lightning 2.6 having no TorchTPU accelerator), else both."""
    found = re.search(r"^# verify-runtimes: ([\w\- ,]+?)(?:  \(|$)", example.read_text(), re.MULTILINE)
    return [r.strip() for r in found.group(1).replace(",", " ").split()] if found else ["torch-xla", "torch-tpu"]


def example_settings(example: Path) -> dict:
    """An example's ``# verify-unsafe-fixes`` line: it keeps its losses only with the unsafe
    fixes (the workaround of a torch_xla defect, XLA9xx: docs/runtime_defects.md), or runs on
    XLA only with them (Hogwild made data parallel, XLA612)."""
    return {"unsafe_fixes": True} if re.search(r"^# verify-unsafe-fixes$", example.read_text(), re.MULTILINE) else {}


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_keeps_loss_parity_on_cpu_pjrt(example, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what the examples write (samples, checkpoints) lands here
    result = assert_loss_parity(example, *example_args(example), steps=8, **example_settings(example))
    assert result.migrated.cpu_fallback_ops == {}
    assert result.reference.device == "cpu (cuda emulated)"
    # the same model: as many parameters, tied the same way, every one the optimizers hold
    reference, migrated = result.reference.parameters, result.migrated.parameters
    assert reference["numel"] > 0 and reference == migrated
    assert not [finding for finding in result.diagnosis if finding.blocking]


COMPILED_GPT = FIXTURES / "examples" / "compiled_gpt.py"
COMPILED_FORMS = FIXTURES / "examples" / "compiled_forms.py"


def compile_line(script: Path) -> int:
    """The line of ``script`` that compiles its model."""
    return next(n for n, text in enumerate(script.read_text().splitlines(), 1) if "= torch.compile(" in text)


def compiled_gpt_copy(tmp_path: Path, old: str, new: str) -> Path:
    """compiled_gpt.py with ``old`` written as ``new``, in ``tmp_path``."""
    text = COMPILED_GPT.read_text()
    assert old in text, old
    script = tmp_path / COMPILED_GPT.name
    script.write_text(text.replace(old, new, 1))
    return script


@pytest.mark.slow
def test_a_model_compiled_on_inductor_is_dropped_by_default_and_trains_the_same(tmp_path, monkeypatch):
    """Issue 30 item 2: a nanoGPT-style `model = torch.compile(model)` crashed both runs in Dynamo
    under verify's forward hook; the reference now runs compiled code eagerly. Issue 40: the
    default migration drops torch.compile (XLA810, safe; inductor cannot compile for XLA and the
    lazy tensor compiles the step anyway), so the migrated run trains the same, one graph a step."""
    monkeypatch.chdir(tmp_path)
    result = verify(COMPILED_GPT, [], Settings(steps=4))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.tolerance_source.startswith("float64")
    assert result.migrated.compiled == []  # no torch.compile left in the migration
    assert result.migrated.compilations <= 3 and result.migrated.recompilations == 0
    assert result.reference.parameters == result.migrated.parameters
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]  # what the reference made of it
    assert "the reference ran it eagerly" in note.message and "migrated" not in note.message
    assert not note.blocking
    assert result.reference.compiled == [
        {
            "file": str(COMPILED_GPT),
            "line": compile_line(COMPILED_GPT),
            "backend": "inductor",
            "ran": "eagerly",
            "why": "inductor's CPU code is not what a GPU runs; torch.compile keeps the eager result",
        }
    ]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ignored", "backend-unknown"])
def test_a_model_left_on_inductor_is_an_error_naming_xla810_at_its_torch_compile_line(tmp_path, monkeypatch, how):
    """Where XLA810's fix does not apply (`--ignore XLA810`, or a backend the migration cannot
    read: a name), inductor fails on XLA tensors as it does without verify, and the report names
    XLA810 at the torch.compile line."""
    monkeypatch.chdir(tmp_path)
    if how == "ignored":
        script, settings = COMPILED_GPT, Settings(steps=4, ignore=("XLA810",))
    else:
        script = compiled_gpt_copy(tmp_path, "torch.compile(model)", "torch.compile(model, backend=BACKEND)")
        script.write_text(
            script.read_text().replace("\nimport argparse\n", '\nimport argparse\n\nBACKEND = "inductor"\n')
        )
        settings = Settings(steps=4)
    result = verify(script, [], settings)
    assert result.verdict == "error"
    assert len(result.reference.losses) == 4 and not result.reference.error, result.reference.stderr_tail
    assert "already tracked for mutation" not in result.reference.stderr_tail + result.migrated.stderr_tail
    crash = next(f for f in result.diagnosis if f.kind == "crash")
    assert crash.rule == "XLA810", crash.message
    assert (Path(crash.file).name, crash.line) == (COMPILED_GPT.name, compile_line(script)), crash.message
    assert "inductor" in crash.message
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]  # what the reference made of it
    assert "the reference ran it eagerly" in note.message and "migrated" not in note.message
    assert result.reference.compiled[0]["ran"] == "eagerly"


@pytest.mark.slow
@pytest.mark.parametrize("dropout", ["0.0", "0.1"])
def test_a_model_compiled_with_openxla_runs_dynamo_under_verify_and_matches(tmp_path, monkeypatch, dropout):
    """A script that reads torch.compile's wrapper (`model._orig_mod`) keeps it, re-backed with
    `backend="openxla"` (XLA810): the migrated run compiles with openxla for real, under the
    instrumentation (float64 mode traced, the forward hook a no-op while Dynamo traces); dropout
    masks are drawn eagerly at each call, outside the graphs, so both runs draw alike."""
    monkeypatch.chdir(tmp_path)
    script = compiled_gpt_copy(
        tmp_path,
        "    for it in range(args.iters):",
        "    raw_model = model._orig_mod if args.compile else model\n\n    for it in range(args.iters):",
    )
    code, _ = migrate_code(script.read_text(), options_for())
    assert 'torch.compile(model, backend="openxla")' in code
    result = verify(script, ["--dropout", dropout], Settings(steps=4))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.tolerance_source.startswith("float64")
    [site] = result.migrated.compiled
    assert (Path(site["file"]).name, site["line"], site["backend"], site["ran"]) == (
        COMPILED_GPT.name,
        compile_line(script),
        "openxla",
        "compiled",
    )
    assert result.reference.compiled[0]["ran"] == "eagerly"
    # the models as the script built them, not torch.compile's wrapper or the compiler's graphs
    assert result.reference.parameters == result.migrated.parameters
    assert result.migrated.parameters["models"] == ["GPT"]
    assert result.migrated.compilations  # XLA compiled what Dynamo handed it
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]
    assert "the reference ran it eagerly" in note.message and "compiled it with openxla" in note.message
    assert not note.blocking


@pytest.mark.slow
@pytest.mark.parametrize("form", ["method", "decorator", "loss", "max-autotune", "dynamic"])
def test_every_form_of_torch_compile_is_dropped_by_default_and_trains_the_same(tmp_path, monkeypatch, form):
    """Issue 40: `model.compile()`, a `@torch.compile` function, a compiled loss function, a GPU
    tuning mode and `dynamic=True` all go by default (XLA810), and the migrated run matches with
    the step's graphs compiled once (docs/decisions.md, "torch.compile on XLA")."""
    monkeypatch.chdir(tmp_path)
    result = verify(COMPILED_FORMS, ["--form", form, "--dropout", "0.1"], Settings(steps=6))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.migrated.compiled == []
    assert result.migrated.compilations <= 3 and result.migrated.recompilations == 0


MNIST = FIXTURES / "examples" / "mnist_cnn.py"
SHORT_MNIST = ["--epochs", "1", "--train-size", "128"]


@pytest.mark.slow
def test_multiprocess_target_runs_under_launch_and_keeps_the_losses(tmp_path):
    """World size 1 on CPU (multi-process CPU collectives hang here). In order: a
    DistributedSampler shuffles in another order than the DataLoader's own shuffle."""
    migrated, _ = migrate_code(MNIST.read_text(), options_for(target="multiprocess"))
    assert "torch_xla.launch(_mp_fn)" in migrated and "DistributedSampler(" in migrated
    result = run_verify(
        str(MNIST),
        "--target",
        "multiprocess",
        "--steps",
        "4",
        "--json",
        str(tmp_path / "r.json"),
        "--",
        *SHORT_MNIST,
        "--no-shuffle",
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r.json").read_text())["steps_compared"] == 4


@pytest.mark.slow
def test_spmd_target_on_four_cpu_devices_keeps_the_losses(tmp_path, monkeypatch):
    monkeypatch.setenv("CPU_NUM_DEVICES", "4")
    result = run_verify(str(MNIST), "--target", "spmd", "--steps", "4", "--", *SHORT_MNIST)
    assert result.exit_code == 0, result.output
    assert "verdict: match" in result.output


@pytest.mark.slow
def test_spmd_form_shards_the_batch_over_four_cpu_devices(tmp_path):
    """What the SPMD target writes really splits a batch across the devices."""
    import subprocess
    import sys

    code = textwrap.dedent("""
        import torch, torch_xla
        import torch_xla.runtime as xr
        import torch_xla.distributed.spmd as xs
        xr.use_spmd()
        xs.set_global_mesh(xs.get_1d_mesh("data"))
        x = torch.randn(8, 1, 4, 4).to(torch_xla.device())
        xs.mark_sharding(x, xs.get_global_mesh(), ("data",) + (None,) * (x.dim() - 1))
        print(xr.global_runtime_device_count(), torch_xla._XLAC._get_xla_sharding_spec(x))
    """)
    env = {**__import__("os").environ, "PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "4"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    count, spec = out.stdout.split(" ", 1)
    assert count == "4" and "devices=[4,1,1,1]" in spec, out.stdout


def run_migrated_example(name: str, tmp_path: Path, env: dict[str, str], *args: str) -> str:
    """Migrate fixtures/examples/<name>.py and run it with plain python on CPU PJRT; returns its stdout."""
    import os
    import subprocess
    import sys

    code, _ = migrate_code((FIXTURES / "examples" / f"{name}.py").read_text(), options_for())
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env={**clean, "PJRT_DEVICE": "CPU", **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_migrated_spawn_example_runs_its_collectives_under_torch_xla_launch(tmp_path):
    # The whole run, past the verify step limit: all_reduce, rank-0 xm.save, rendezvous, load.
    out = run_migrated_example("ddp_spawn", tmp_path, {}, "--checkpoint-dir", str(tmp_path))
    assert "epoch 0 mean loss" in out and "epoch 2 mean loss" in out
    assert (tmp_path / "ddp_spawn.pt").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    "env, mode",
    [
        ({}, "single process: rank 0 of 1"),
        ({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}, "ddp: rank 0 of 1"),
    ],
    ids=["fallback", "torchrun-environment"],
)
def test_migrated_torchrun_example_runs_both_ways(tmp_path, env, mode):
    if "RANK" in env:
        from migrate_xla.verify.children import _free_port

        env = {**env, "MASTER_PORT": str(_free_port())}
    out = run_migrated_example("ddp_torchrun", tmp_path, env, "--out-dir", str(tmp_path))
    assert mode in out
    assert "validation loss" in out and (tmp_path / "ddp_torchrun.pt").is_file()


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
def test_a_script_that_updates_by_hand_stops_at_steps():
    result = verify(SCRIPTS / "manual_sgd.py", [], Settings(steps=4, timeout=300))
    assert [len(result.reference.losses), len(result.migrated.losses)] == [4, 4], result.message
    assert result.verdict == "match", result.message


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


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["float64", "native"])
@pytest.mark.parametrize(
    "script", ["legacy_tensors.py", "prefetch_train.py"], ids=["legacy-typed-tensors", "loader-with-cuda-streams"]
)
def test_the_emulated_reference_runs_legacy_typed_tensors_and_cuda_streams(tmp_path, script, precision):
    """torch.cuda.FloatTensor(batch, 1), Tensor(ndarray), x.type(torch.cuda.FloatTensor); a loader in an
    imported module (prefetch_lib.py, timm's PrefetchLoader) that copies on a torch.cuda.Stream."""
    run = record_reference(SCRIPTS / script, [], Settings(steps=8, precision=precision), tmp_path / "trace.json")
    assert run.error is None, run.stderr_tail
    assert len(run.losses) == 8 and run.device == "cpu (cuda emulated)"


def test_torchrun_variables_only_where_the_script_needs_them(tmp_path):
    from migrate_xla.verify.harness import _shared_environment

    probe = tmp_path / "probe.py"
    probe.write_text("import os\nddp = int(os.environ.get('RANK', -1)) != -1\n")
    needs = tmp_path / "needs.py"
    needs.write_text("import os\nrank = int(os.environ['LOCAL_RANK'])\n")
    clean = Settings()
    assert "RANK" not in _shared_environment(probe, clean) or "RANK" in __import__("os").environ
    assert _shared_environment(needs, clean)["LOCAL_RANK"] == "0"
    assert _shared_environment(probe, Settings(torchrun=True))["WORLD_SIZE"] == "1"


def test_migrated_and_project_together_are_refused(tmp_path):
    result = run_verify(str(TINY), "--migrated", str(migrated_tiny(tmp_path)), "--project", str(SCRIPTS))
    assert result.exit_code == 2
    assert "--project" in result.output and "--migrated" in result.output


def test_compile_causes_point_at_the_users_own_lines(tmp_path):
    original = tmp_path / "train.py"
    original.write_text("import torch\nfor x in data:\n    loss = model(x)\n    opt.step()\nprint(y[0])\n")
    copy = tmp_path / "migrated" / "train.py"
    copy.parent.mkdir()
    copy.write_text(
        "import torch\nimport torch_xla\nfor x in data:\n    loss = model(x)\n    opt.step()\n"
        "    torch_xla.sync()\nprint(y[0])\n"
    )
    causes = [
        {"cause": "user mark_step", "file": str(copy), "line": 6},
        {"cause": "most likely user code trying to access tensor value", "file": str(copy), "line": 7},
        {"cause": "user mark_step", "file": "/elsewhere/lib.py", "line": 3},
    ]
    moved = in_user_files(causes, {copy: original})
    assert [(c["file"], c["line"]) for c in moved] == [(str(original), 4), (str(original), 5), ("/elsewhere/lib.py", 3)]
    assert moved[1]["migrated_line"] == 7


@pytest.mark.slow
def test_a_migrated_run_that_never_touched_the_xla_device_is_no_match(tmp_path):
    """Its losses agree with the reference's, both computed on the CPU: that proves nothing about XLA."""
    result = run_verify(str(SCRIPTS / "cpu_by_default.py"), "--steps", "4", "--json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert result.exit_code == 1 and report["verdict"] == "mismatch", result.output
    assert report["migrated"]["compilations"] == 0
    assert "4 losses agree, but: the migrated run never ran on the XLA device" in result.output
    assert [d["kind"] for d in report["diagnosis"]] == ["not-on-xla"]
    # with the flag the script asks for the GPU, and its migration for the XLA device
    assert run_verify(str(SCRIPTS / "cpu_by_default.py"), "--steps", "4", "--", "--gpu").exit_code == 0
