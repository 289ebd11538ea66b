"""Sharded training (XLA620-XLA624): FSDP v1 and FSDP2 scripts become SPMD programs that keep
the unsharded model's losses over four and eight CPU devices, and a wrong sharding is caught.

verify's reference runs the GPU script with CUDA emulated on the CPU, where torch refuses FSDP
v1 ("FSDP needs a non-CPU accelerator device") and FSDP2 on a "cuda" mesh (its parameters are
on the CPU): so the reference here is the script's world-size-1 twin, the unsharded model
(what an FSDP layout at world size 1 is), saved with ``--save-reference`` and compared with
``--reference``, both in float64.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, run_verify
from migrate_xla.run import migrate_code, options_for

FSDP_GPT = FIXTURES / "sharding" / "fsdp_gpt.py"
FSDP2_GPT = FIXTURES / "sharding" / "fsdp2_gpt.py"
STEPS = ["--steps", "4", "--precision", "float64"]


def unsharded_twin(script: Path, tmp_path: Path) -> Path:
    """The script at world size 1 without its sharding: FSDP v1's wrap becomes its mixed precision
    alone (the forward under bfloat16 autocast), FSDP2's ``fully_shard`` calls go and its mesh
    becomes the process group that ``init_device_mesh`` would have made."""
    text = script.read_text()
    text = re.sub(
        r"    model = FSDP\(\n(?:        .*\n)*    \)\n",
        '    model.forward = torch.autocast("cuda", dtype=torch.bfloat16)(model.forward)\n',
        text,
    )
    text = re.sub(r"    mesh = init_device_mesh\(.*\)\n", '    dist.init_process_group("nccl")\n', text)
    text = re.sub(r"    for block in model.blocks:\n        fully_shard\(.*\)\n    fully_shard\(.*\)\n", "", text)
    assert "FSDP(" not in text and "fully_shard(" not in text.split('"""', 2)[2]
    twin = tmp_path / script.name
    twin.write_text(text)
    return twin


def saved_reference(script: Path, tmp_path: Path) -> Path:
    trace = tmp_path / "reference.json"
    result = run_verify(
        str(unsharded_twin(script, tmp_path)), "--save-reference", str(trace), *STEPS, "--", "--steps", "4"
    )
    assert result.exit_code == 0, result.output
    return trace


@pytest.mark.slow
@pytest.mark.parametrize("devices", ["4", "8"])
@pytest.mark.parametrize("script", [FSDP_GPT, FSDP2_GPT], ids=lambda p: p.stem)
def test_sharded_example_keeps_the_unsharded_losses_on_virtual_devices(script, devices, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CPU_NUM_DEVICES", devices)
    trace = saved_reference(script, tmp_path)
    report = tmp_path / "report.json"
    result = run_verify(
        str(script), "--target", "spmd", "--reference", str(trace), *STEPS, "--json", str(report), "--", "--steps", "4"
    )
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
    trace = saved_reference(FSDP2_GPT, tmp_path)
    migrated, _ = migrate_code(FSDP2_GPT.read_text(), options_for(target="spmd"))
    assert "xr.world_size()" in migrated
    sabotaged = tmp_path / "sabotaged.py"
    sabotaged.write_text(migrated.replace("xr.world_size()", "xr.global_runtime_device_count()"))
    result = run_verify(
        str(FSDP2_GPT), "--migrated", str(sabotaged), "--reference", str(trace), *STEPS, "--", "--steps", "4"
    )
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
