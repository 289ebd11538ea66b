"""migrate_xla/generated/tpu_api.py, torch_tpu's public names, and its generator make_tpu_api.py."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from migrate_xla.generated import tpu_api
from migrate_xla.generators import make_tpu_api

PUBLIC_API = """
import dataclasses

@dataclasses.dataclass(frozen=True)
class Property:
  target: str

_DEVICE = "torch_tpu._internal.device:Tpu"

def _attr(name):
  return f"{_DEVICE}.{name}"

_PUBLIC_MODULES: Mapping[str, ModuleSpec] = {
    "torch.tpu": ModuleSpec(
        exports={
            "Stream": _attr("Stream"),
            "eager_mode": Property(f"{_DEVICE}.eager_mode"),
            "synchronize": _attr("synchronize"),
        },
        doc="torch.tpu",
    ),
    "torch.tpu.ops": ModuleSpec(exports={"ragged_dot": "torch_tpu._internal.ops:ragged_dot"}),
    "torch.tpu.empty": ModuleSpec(doc="no exports"),
}

def install(table=_PUBLIC_MODULES):
  pass
"""
LOADER = """
import torch
def load(device="tpu"):
  assert device == "tpu"
  torch.utils.rename_privateuse1_backend(device)
  torch.distributed.Backend.register_backend("tpu_dist", create, devices=["tpu"])
  torch.distributed.Backend.register_backend("tpu", create, devices=["tpu"])
"""
METADATA = """Metadata-Version: 2.1
Name: torch_tpu
Version: 9.8.7
Requires-Python: >=3.11
Requires-Dist: numpy>=2
Requires-Dist: torch>=2.11.0,<=2.15.0
Requires-Dist: torchvision; extra == "vision"
"""


def fake_wheel(folder: Path, **replaced: str) -> Path:
    """A wheel holding just what the generator reads (``replaced``: other texts by file name)."""
    files = {
        "torch_tpu-9.8.7.dist-info/METADATA": METADATA,
        "torch_tpu-9.8.7.dist-info/entry_points.txt": "[torch.backends]\ntorch_tpu = torch_tpu._loader:load\n",
        make_tpu_api.PUBLIC_API: PUBLIC_API,
        make_tpu_api.LOADER: LOADER,
        make_tpu_api.COMPILE: 'registry.register_backend(compiler_fn=TpuBackend(), name="tpu")\n',
        make_tpu_api.DEVICE_MODULE: "class Meta:\n  _autocast_dtype: torch.dtype | None = torch.bfloat16\n",
    }
    files.update({name: text for name, text in replaced.items()})
    wheel = folder / "torch_tpu-9.8.7-cp311-cp311-manylinux_2_31_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            if text is not None:
                archive.writestr(name, text)
    return wheel


def load(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "tpu_api.py", "exec"), namespace)
    return namespace


def test_the_generator_reads_a_wheel_without_importing_it(tmp_path):
    api = make_tpu_api.read_wheel(fake_wheel(tmp_path))
    assert api == make_tpu_api.TpuApi(
        version="9.8.7",
        requires_python=">=3.11",
        requires_torch=">=2.11.0,<=2.15.0",
        entry_point=("torch.backends", "torch_tpu", "torch_tpu._loader:load"),
        device="tpu",
        process_group_backends=("tpu_dist", "tpu"),
        compile_backend="tpu",
        autocast_dtype="bfloat16",
        public_modules={
            "torch.tpu": frozenset({"Stream", "eager_mode", "synchronize"}),
            "torch.tpu.ops": frozenset({"ragged_dot"}),
            "torch.tpu.empty": frozenset(),
        },
    )
    generated = load(make_tpu_api.table_text(api))
    assert generated["TORCH_TPU_VERSION"] == "9.8.7"
    assert generated["PUBLIC_MODULES"] == api.public_modules
    assert generated["is_public"]("torch.tpu.synchronize") and generated["is_public"]("torch.tpu.ops")
    assert not generated["is_public"]("torch.tpu.memory_allocated")
    assert "torch_tpu" not in sys.modules


def test_the_generator_writes_the_table_and_says_when_it_is_current(tmp_path, monkeypatch):
    table = tmp_path / "tpu_api.py"
    monkeypatch.setattr(make_tpu_api, "TABLE", table)
    wheel = fake_wheel(tmp_path)
    assert make_tpu_api.main([str(wheel)]) == 0
    assert load(table.read_text())["DEVICE"] == "tpu"
    before = table.stat().st_mtime_ns
    assert make_tpu_api.main([str(wheel)]) == 0
    assert table.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    ("replaced", "message"),
    [
        ({make_tpu_api.PUBLIC_API: "TABLE = {}\n"}, "no `_PUBLIC_MODULES = {...}`"),
        ({make_tpu_api.LOADER: None}, "no torch_tpu/_loader.py"),
        ({make_tpu_api.LOADER: "def load(device):\n  pass\n"}, 'no `assert device == "..."`'),
        ({"torch_tpu-9.8.7.dist-info/entry_points.txt": "[console_scripts]\nx = y:z\n"}, "[torch.backends]"),
        (
            {"torch_tpu-9.8.7.dist-info/METADATA": "Name: torch_tpu\nVersion: 1\n"},
            "expected one Requires-Dist of torch",
        ),
    ],
)
def test_a_wheel_that_changed_is_an_error_naming_what(tmp_path, replaced, message):
    with pytest.raises(make_tpu_api.WheelError, match=re.escape(message)):
        make_tpu_api.read_wheel(fake_wheel(tmp_path, **replaced))


def test_the_committed_table_has_the_names_issue_24_lists():
    """torch.tpu as issue 24 read it from torch_tpu 0.2.0: streams and events, device and
    seed management, amp and eager mode; memory statistics are not public."""
    listed = {
        "Event", "Stream", "current_stream", "default_stream", "set_stream", "stream", "synchronize",
        "device", "device_count", "current_device", "set_device", "device_of", "is_available",
        "is_initialized", "get_device_name", "get_device_properties", "manual_seed", "manual_seed_all",
        "initial_seed", "get_rng_state", "set_rng_state", "default_generators", "get_amp_supported_dtype",
        "EagerMode", "set_eager_mode", "eager_mode", "Precision", "precision", "allow_excess_precision",
        "topology_aware_mesh",
    }  # fmt: skip
    assert tpu_api.PUBLIC_MODULES["torch.tpu"] == listed
    submodules = {"compiler", "distributed", "ops", "optimizers", "pallas", "profiler"}
    assert {m for m in tpu_api.PUBLIC_MODULES if m != "torch.tpu"} == {f"torch.tpu.{s}" for s in submodules}
    for name in ("memory_allocated", "max_memory_allocated", "empty_cache", "reset_peak_memory_stats"):
        assert not tpu_api.is_public(f"torch.tpu.{name}")
    assert tpu_api.is_public("torch.tpu.synchronize") and tpu_api.is_public("torch.tpu.ops")
    assert (tpu_api.TORCH_TPU_VERSION, tpu_api.DEVICE, tpu_api.AUTOCAST_DTYPE) == ("0.2.0", "tpu", "bfloat16")
    assert tpu_api.REQUIRES_TORCH == ">=2.11.0,<=2.15.0"
    assert "tpu" in tpu_api.PROCESS_GROUP_BACKENDS and tpu_api.COMPILE_BACKEND == "tpu"
    assert tpu_api.ENTRY_POINT[0] == "torch.backends"


@pytest.mark.slow
def test_the_committed_table_is_what_the_wheel_on_pypi_gives(tmp_path):
    """Downloads torch_tpu's wheel (about 100 MB) with pip and regenerates the table from it."""
    version = tpu_api.TORCH_TPU_VERSION
    download = [sys.executable, "-m", "pip", "download", f"torch-tpu=={version}", "--no-deps", "-d", str(tmp_path)]
    download += ["--only-binary", ":all:", "--python-version", "3.11", "--platform", "manylinux_2_31_x86_64"]
    subprocess.run(download, check=True, capture_output=True, timeout=900)
    (wheel,) = tmp_path.glob("torch_tpu-*.whl")
    table = make_tpu_api.table_text(make_tpu_api.read_wheel(wheel))
    assert make_tpu_api.TABLE.read_text(encoding="utf-8") == table, (
        f"migrate_xla/generated/tpu_api.py is stale: {make_tpu_api.REGENERATE}"
    )
