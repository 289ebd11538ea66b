"""Sharded training (XLA620-XLA624): FSDP v1 and FSDP2 scripts become SPMD programs that keep
the losses of the script as written over four and eight CPU devices, and a wrong sharding is
caught.

verify's reference runs the GPU script at world size 1 with CUDA emulated on the CPU: FSDP v1
is given the CPU as its device and a "cuda" device mesh is a CPU mesh (child/emulation.py), so
FSDP runs as written, sharding nothing, with its mixed precision; both runs in float64.
"""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_verify
from migrate_xla.run import migrate_code, options_for

FSDP_GPT = FIXTURES / "sharding" / "fsdp_gpt.py"
FSDP2_GPT = FIXTURES / "sharding" / "fsdp2_gpt.py"
STEPS = ["--steps", "4", "--precision", "float64"]


@pytest.mark.slow
@pytest.mark.parametrize("devices", ["4", "8"])
@pytest.mark.parametrize("script", [FSDP_GPT, FSDP2_GPT], ids=lambda p: p.stem)
def test_sharded_example_keeps_the_unsharded_losses_on_virtual_devices(script, devices, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CPU_NUM_DEVICES", devices)
    report = tmp_path / "report.json"
    result = run_verify(str(script), "--target", "spmd", *STEPS, "--json", str(report), "--", "--steps", "4")
    assert result.exit_code == 0, result.output
    assert "verdict: match" in result.output
    assert json.loads(report.read_text())["steps_compared"] == 4


@pytest.mark.slow
def test_a_sharding_that_changes_the_math_is_a_mismatch(tmp_path, monkeypatch):
    """Sabotage: a migration that takes the devices for processes (``xr.world_size()`` read as
    the device count) trains each step on a quarter of the global batch, as if the gradient of
    the other devices' rows had been dropped: verify must say so."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CPU_NUM_DEVICES", "4")
    migrated, _ = migrate_code(FSDP2_GPT.read_text(), options_for(target="spmd"))
    assert "xr.world_size()" in migrated
    sabotaged = tmp_path / "sabotaged.py"
    sabotaged.write_text(migrated.replace("xr.world_size()", "xr.global_runtime_device_count()"))
    result = run_verify(str(FSDP2_GPT), "--migrated", str(sabotaged), *STEPS, "--", "--steps", "4")
    assert result.exit_code == 1, result.output
    assert "verdict: mismatch" in result.output


def test_fsdp_scripts_keep_their_form_under_multiprocess():
    """One process per device cannot be one SPMD program: the sharding stays flagged (XLA608)."""
    migrated, findings = migrate_code(FSDP_GPT.read_text(), options_for(target="multiprocess"))
    codes = {d.code for d in findings}
    assert "XLA608" in codes and not codes & {"XLA620", "XLA621", "XLA622", "XLA623"}
    assert "FSDP(" in migrated


def test_the_default_target_makes_the_same_spmd_program():
    """A script that shards is an SPMD program on XLA whatever the target (single or spmd); under
    spmd, XLA670 also sets SPMD and a "data" mesh up first in the ``__main__`` block of a script
    without a process group (the mesh the script builds then replaces it: harmless, redundant)."""
    single, _ = migrate_code(FSDP2_GPT.read_text(), options_for())
    spmd, _ = migrate_code(FSDP2_GPT.read_text(), options_for(target="spmd"))
    assert spmd == single.replace(
        'if __name__ == "__main__":\n',
        'if __name__ == "__main__":\n    xr.use_spmd()\n    xs.set_global_mesh(xs.get_1d_mesh("data"))\n',
    )
    assert "xs.mark_sharding(param, mesh, (mesh.axis_names[-1],)" in single
    assert "fully_shard" not in single.split('"""', 2)[2]
    # a script with a process group is one the target rules leave alone: the same program
    single, _ = migrate_code(FSDP_GPT.read_text(), options_for())
    spmd, findings = migrate_code(FSDP_GPT.read_text(), options_for(target="spmd"))
    assert spmd == single and "FSDPv2(" in single and "init_process_group" not in single
