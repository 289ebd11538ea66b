"""The examples under fixtures/examples/ keep loss parity on CPU PJRT, and the migrations the
multi-process and SPMD targets write run: under ``torch_xla.launch``, sharded over four CPU
devices, and as plain scripts with their collectives."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXTURES, run_verify
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.verify import assert_loss_parity
from verify_helpers import example_args, example_settings


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
