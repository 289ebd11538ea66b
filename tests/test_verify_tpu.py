"""verify for a TorchTPU migration (--runtime torch-tpu): the migrated run is eager PyTorch on
the CPU with the "tpu" device and torch.tpu emulated (child/tpu_emulation.py), compared step by step with
the reference run (CUDA emulated) as a PyTorch/XLA migration is.

The hand migrations in tests/scripts/*_tpu.py are what the torch-tpu rules write; the
end-to-end test migrates an example with the tool itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXTURES, ROOT, run_verify
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.generated import tpu_api
from migrate_xla.verify import Settings, VerifyError, verify
from migrate_xla.verify.children import _instrumentation, tpu_facts
from migrate_xla.verify.compare import TPU_EMULATION_SCOPE
from migrate_xla.verify.harness import record_reference, runtime_of
from verify_helpers import example_args, example_runtimes, example_settings

SCRIPTS = ROOT / "tests" / "scripts"
TINY = SCRIPTS / "tiny_mlp.py"
TINY_TPU = SCRIPTS / "tiny_mlp_tpu.py"  # tiny_mlp.py migrated to TorchTPU by hand
FEATURES = SCRIPTS / "tpu_features.py"
FEATURES_TPU = SCRIPTS / "tpu_features_tpu.py"
TPU = {"runtime": "torch-tpu"}


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory) -> Path:
    trace = tmp_path_factory.mktemp("trace") / "tiny.json"
    run = record_reference(TINY, [], Settings(steps=6, precision="float64"), trace)
    assert run.error is None, run.stderr_tail
    return trace


def sabotaged(script: Path, tmp_path: Path, old: str, new: str) -> Path:
    code = script.read_text()
    assert old in code, old
    path = tmp_path / script.name
    path.write_text(code.replace(old, new, 1))
    return path


@pytest.mark.slow
def test_a_torch_tpu_migration_matches_under_emulation_and_the_report_says_what_that_proves(tmp_path):
    result = run_verify(
        str(TINY), "--runtime", "torch-tpu", "--steps", "6", "--migrated", str(TINY_TPU),
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "verdict: match" in result.output
    assert "TorchTPU emulated: a match proves the migration's logic" in result.output
    assert "only a run on a TPU proves TorchTPU's own kernels and compiler" in result.output
    assert "XLA:" not in result.output  # no graph executions or compilations to report
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "match" and report["steps_compared"] == 6
    assert report["max_rel_diff"] < 1e-12 and report["tolerance"]["source"].startswith("float64")
    assert report["runtime"] == "torch-tpu" and report["scope"] == TPU_EMULATION_SCOPE
    assert report["reference"]["device"] == "cpu (cuda emulated)"
    assert report["migrated"]["device"] == "cpu (tpu emulated)"
    assert report["migrated"]["compilations"] is None and report["migrated"]["executions"] is None
    assert report["parameters"]["reference"] == report["parameters"]["migrated"]
    assert not [f for f in report["diagnosis"] if f["kind"] in ("steps-not-cut", "not-on-xla", "recompilation")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "breakage",
    [("lr=0.05", "lr=0.055"), ("    optimizer.step()\n", "    pass\n")],
    ids=["learning-rate-off-by-10-percent", "dropped-optimizer-step"],
)
def test_a_wrong_torch_tpu_migration_is_a_mismatch(tmp_path, tiny_trace, breakage):
    broken = sabotaged(TINY_TPU, tmp_path, *breakage)
    result = verify(TINY, [], Settings(steps=6, **TPU), migrated=broken, reference_trace=tiny_trace)
    assert result.verdict == "mismatch", result.message + result.migrated.stderr_tail
    assert result.first_mismatch == 2 and "diverge at step 2" in result.message
    assert result.migrated.device == "cpu (tpu emulated)"


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["float64", "native"])
def test_torch_tpu_calls_run_under_emulation(precision):
    """torch.tpu.synchronize / set_device / manual_seed_all / Stream / Event / stream /
    current_stream / get_device_name, .tpu() on a module and a tensor, Tensor.is_tpu,
    device="tpu", "tpu:0", autocast("tpu") and init_process_group(backend="tpu") with DDP."""
    result = verify(FEATURES, [], Settings(steps=6, precision=precision, **TPU), migrated=FEATURES_TPU)
    failed = result.message + result.migrated.stderr_tail + result.reference.stderr_tail
    assert result.steps_compared == 6 and result.first_mismatch is None, failed
    if precision == "float64":  # autocast leaves float64 alone, on both sides
        assert result.verdict == "match" and result.max_rel_diff < 1e-12, failed
    else:  # float16 autocast on the GPU, bfloat16 (TorchTPU's) in the migration: they agree within
        # 5e-2, which decides nothing (docs/verify.md, which steps decide a verdict)
        assert (result.reference.precision, result.migrated.precision) == ("float16", "bfloat16")
        assert result.verdict == "inconclusive" and 0 < result.max_rel_diff < 5e-2, failed


COMPILED_GPT = ROOT / "fixtures" / "examples" / "compiled_gpt.py"


@pytest.mark.slow
@pytest.mark.parametrize("ignored", [True, False], ids=["xla810-ignored", "tpu-backend"])
def test_a_compiled_model_under_torch_tpu_runs_eagerly_or_names_xla810(tmp_path, monkeypatch, ignored):
    """Issue 30 item 2 under TorchTPU: backend="tpu" (XLA810's fix, applied by default since
    issue 40) runs eagerly in the emulation, as compiled code does in the reference, and the
    report says so; inductor, where the fix does not apply (--ignore XLA810), compiles GPU or
    CPU code, not TPU code: the emulation refuses it at the torch.compile line, and the report
    names XLA810 there."""
    monkeypatch.chdir(tmp_path)
    result = verify(COMPILED_GPT, [], Settings(steps=3, ignore=("XLA810",) if ignored else None, **TPU))
    line = next(n for n, text in enumerate(COMPILED_GPT.read_text().splitlines(), 1) if "= torch.compile(" in text)
    assert len(result.reference.losses) == 3, result.reference.stderr_tail
    if not ignored:
        assert result.verdict == "match", result.message + result.migrated.stderr_tail
        assert [(s["backend"], s["ran"]) for s in result.migrated.compiled] == [("tpu", "eagerly")]
        [note] = [f for f in result.diagnosis if f.kind == "compiled"]
        assert "the migrated run ran it eagerly (backend tpu: TorchTPU's compiler needs a TPU" in note.message
        assert note.line == line
    else:
        assert result.verdict == "error"
        crash = next(f for f in result.diagnosis if f.kind == "crash")
        assert crash.rule == "XLA810" and (Path(crash.file).name, crash.line) == (COMPILED_GPT.name, line)
        assert "not TPU code" in crash.message


@pytest.mark.slow
def test_torch_xla_in_a_torch_tpu_migration_is_a_clear_crash(tmp_path, tiny_trace):
    """TorchTPU needs torch >= 2.11, which no torch_xla release pairs with: the emulated run has none."""
    code, _ = migrate_code(TINY.read_text(), options_for(runtime="torch-xla"))
    assert "import torch_xla" in code
    xla_form = tmp_path / "tiny_xla.py"
    xla_form.write_text(code)
    result = verify(TINY, [], Settings(steps=6, **TPU), migrated=xla_form, reference_trace=tiny_trace)
    assert result.verdict == "error", result.message
    crash = next(f for f in result.diagnosis if f.kind == "crash")
    assert "torch_xla in a TorchTPU migration" in crash.message and crash.file == str(xla_form), crash.to_dict()


EMULATED = """\
import json, os, sys, torch
from migrate_xla.verify.child import tpu_emulation
api = json.loads(os.environ["TPU_FACTS"])
tpu_emulation._install_tpu_shim(api)
tpu_emulation.TpuEmulationMode().__enter__()
out = {}
out["device"] = [str(torch.device("tpu")), torch.device("tpu:0").type]
out["placed"] = [
    torch.zeros(2, device="tpu").device.type, torch.ones(2).to("tpu:0").device.type,
    torch.ones(2).tpu().device.type, torch.nn.Linear(2, 2).tpu().weight.device.type,
    torch.nn.Linear(2, 2, device=torch.device("tpu")).to("tpu").weight.device.type,
]
out["is_tpu"] = torch.ones(1).is_tpu
out["module"] = [sys.modules["torch.tpu"] is torch.tpu, torch.tpu.is_available(), torch.tpu.device_count(),
                 torch.tpu.current_device(), torch.tpu.get_device_name()]
missing = {q: [n for n in names if not hasattr(sys.modules[q], n)] for q, names in api["public_modules"].items()}
out["missing"] = {q: n for q, n in missing.items() if n}
torch.tpu.synchronize()
torch.tpu.distributed.set_tpu_launch_env(nproc_per_node=1)  # what a launcher's parent calls: nothing to set
torch.manual_seed(0)
first = torch.rand(1).item()
out["seed_of_torch"] = torch.tpu.initial_seed()
torch.manual_seed(0)
torch.tpu.manual_seed(5)
out["seeds"] = [torch.tpu.initial_seed(), torch.rand(1).item() == first]
with torch.autocast("tpu"):
    out["autocast"] = str((torch.ones(2, 2) @ torch.ones(2, 2)).dtype)
import torch.distributed as dist
dist.init_process_group(backend="tpu", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
out["backend"] = dist.get_backend()
try:
    import torch_xla
except ModuleNotFoundError as exc:
    out["torch_xla"] = str(exc)
for name in ("torch.tpu.set_eager_mode", "torch.tpu.ops.splash_sdpa"):
    try:
        eval(name)(1)
    except NotImplementedError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_the_emulated_torch_tpu_has_every_name_of_the_table(tmp_path):
    folder = _instrumentation(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(folder), "TPU_FACTS": json.dumps(tpu_facts())}
    env.pop("XLA_MIGRATE_VERIFY", None)
    done = subprocess.run(
        [sys.executable, "-c", EMULATED], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["device"] == ["tpu", "tpu"]
    assert out["placed"] == ["cpu"] * 5 and out["is_tpu"] is True
    assert out["module"] == [True, True, 1, 0, "cpu (tpu emulated)"]
    assert out["missing"] == {}, "names of tpu_api.PUBLIC_MODULES the emulation lacks"
    assert out["seed_of_torch"] == 0  # torch.manual_seed seeds the device's generator too, as with torch_tpu
    assert out["seeds"] == [5, True]  # torch.tpu.manual_seed seeds the device's, not the CPU's
    assert out["autocast"] == "torch." + tpu_api.AUTOCAST_DTYPE
    assert out["backend"] == "gloo"
    assert "torch_xla" in out["torch_xla"]
    for name in ("torch.tpu.set_eager_mode", "torch.tpu.ops.splash_sdpa"):
        assert out[name].startswith(f"{name} is TorchTPU's own: verify's CPU emulation"), out[name]


def test_a_torch_tpu_verify_computes_in_float64_and_takes_the_runtime_of_the_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("PJRT_DEVICE", "TPU")  # a TPU VM: PyTorch/XLA's run would be native there
    assert Settings(runtime="torch-tpu").float64() and not Settings().float64()
    assert not Settings(runtime="torch-tpu", precision="native").float64()
    (tmp_path / "pyproject.toml").write_text('[tool.xla-migrate]\nruntime = "torch-tpu"\n')
    assert runtime_of(Settings(), tmp_path) == "torch-tpu"
    assert runtime_of(Settings(runtime="torch-xla"), tmp_path) == "torch-xla"
    with pytest.raises(VerifyError, match="PJRT_DEVICE"):  # there is no PJRT in a TorchTPU run
        verify(TINY, [], Settings(runtime="torch-tpu", device="TPU"), migrated=TINY_TPU)


MNIST = FIXTURES / "examples" / "mnist_cnn.py"


@pytest.mark.slow
def test_an_example_migrated_to_torch_tpu_by_the_tool_keeps_its_losses(tmp_path):
    code, _ = migrate_code(MNIST.read_text(), options_for(runtime="torch-tpu"))
    assert "torch_xla" not in code and "torch.tpu.manual_seed(" in code
    result = run_verify(
        str(MNIST), "--runtime", "torch-tpu", "--steps", "4", "--json", str(tmp_path / "r.json"),
        "--", "--epochs", "1", "--train-size", "128",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["migrated"]["device"] == "cpu (tpu emulated)" and report["steps_compared"] == 4
    assert report["parameters"]["reference"] == report["parameters"]["migrated"]


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_migrated_to_torch_tpu_keeps_loss_parity_under_emulation(example, tmp_path, monkeypatch):
    """Issue 24: every example migrated with --runtime torch-tpu verifies `match` (the examples'
    own arguments and settings, as on CPU PJRT: test_verify_examples.py)."""
    if "torch-tpu" not in example_runtimes(example):
        pytest.skip(f"{example.name} runs on PyTorch/XLA only (its '# verify-runtimes:' line)")
    monkeypatch.chdir(tmp_path)  # what the examples write (samples, checkpoints) lands here
    result = verify(example, example_args(example), Settings(steps=8, **TPU, **example_settings(example)))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.migrated.device == "cpu (tpu emulated)" and result.reference.device == "cpu (cuda emulated)"
    assert result.reference.parameters == result.migrated.parameters
    assert not [finding for finding in result.diagnosis if finding.blocking]


def test_the_hand_migrations_spell_no_torch_xla_and_only_public_torch_tpu_names():
    import re

    for script in (TINY_TPU, FEATURES_TPU):
        code = script.read_text().split('"""', 2)[2]  # past the docstring
        assert "torch_xla" not in code and "cuda" not in code
        for name in re.findall(r"torch\.tpu\.\w+", code):
            assert tpu_api.is_public(name), name


@pytest.mark.slow
def test_two_emulated_process_groups_do_not_meet_at_the_port_the_script_names(tmp_path):
    """Both runs open a gloo group side by side (NCCL's in the reference, TorchTPU's in the
    migrated run): each meets at its own port, not at the script's MASTER_PORT (EADDRINUSE)."""
    script = SCRIPTS / "ddp_fixed_port.py"
    result = run_verify(str(script), "--runtime", "torch-tpu", "--steps", "6", "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "match" and report["steps_compared"] == 6
