"""The verification harness end to end on small scripts (real child processes on CPU PJRT): a
match and its report, steps a missing sync leaves uncut, failures that say what went wrong,
the workers and sibling modules a script brings, the reference's CUDA emulation, and the
checks of verify's own arguments and environment."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import run_verify
from migrate_xla.verify import Settings, verify
from migrate_xla.verify.diagnosis import _steps_not_cut
from migrate_xla.verify.harness import record_reference
from migrate_xla.verify.user_lines import in_user_files
from verify_helpers import SCRIPTS, TINY, migrated_copy, migrated_tiny


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


@pytest.mark.slow
def test_a_script_that_updates_by_hand_stops_at_steps():
    result = verify(SCRIPTS / "manual_sgd.py", [], Settings(steps=4, timeout=300))
    assert [len(result.reference.losses), len(result.migrated.losses)] == [4, 4], result.message
    assert result.verdict == "match", result.message


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
