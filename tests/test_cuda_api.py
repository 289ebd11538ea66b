"""migrate_xla/generated/cuda_api.py (every public name of torch.cuda and what verify's CUDA
emulation does with it), its generator make_cuda_api.py, the emulation that follows it, and
the refusals verify reports before running (cuda_refusals.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, run_verify
from migrate_xla.generated import cuda_api
from migrate_xla.generators import make_cuda_api
from migrate_xla.verify import cuda_refusals
from migrate_xla.verify.children import _instrumentation

GENERATE = "from migrate_xla.generators import make_cuda_api; print(make_cuda_api.table_text(make_cuda_api.installed()), end='')"


def test_the_table_is_current_for_the_installed_torch():
    """Regenerated from the installed torch: the same text. Fails when torch has a public name
    nobody decided on (the generator refuses to write a table without a decision on each)."""
    done = subprocess.run(
        [sys.executable, "-c", GENERATE], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False
    )
    assert done.returncode == 0, f"{done.stderr[-3000:]}\nregenerate: {make_cuda_api.REGENERATE}"
    assert make_cuda_api.TABLE.read_text(encoding="utf-8") == done.stdout, (
        f"migrate_xla/generated/cuda_api.py is not current for the installed torch: {make_cuda_api.REGENERATE}"
    )


FAKE = {
    "__init__.py": """
        from . import streams, _private
        from .streams import Stream, current_stream
        __all__ = ["Stream", "current_stream", "synchronize", "streams", "flag"]
        flag = True
        def synchronize():
            pass
        def unlisted():
            pass
    """,
    "streams.py": """
        import ctypes
        from typing import Callable
        class Stream:
            pass
        def current_stream():
            pass
        _hidden = 1
    """,
    "_private.py": "def secret():\n    pass\n",
    "extra/__init__.py": "__all__ = ['graph']\ndef graph():\n    pass\n",
}


@pytest.fixture
def fake_api(tmp_path, monkeypatch):
    """A package fakecuda as torch.cuda is laid out: __all__, a submodule without one, a private one."""
    for name, text in FAKE.items():
        path = tmp_path / "fakecuda" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    try:
        return make_cuda_api.collect(importlib.import_module("fakecuda"), "9.9.9")
    finally:
        for module in [m for m in sys.modules if m.split(".")[0] == "fakecuda"]:
            del sys.modules[module]


FAKE_DECISIONS = {
    "fakecuda.Stream": ("cpu", "one stream"),
    "fakecuda.current_stream": ("cpu", "the default stream"),
    "fakecuda.synchronize": ("no-op", "nothing to wait for"),
    "fakecuda.flag": ("kept", "a flag"),
    "fakecuda.extra.graph": ("refused", "capture"),
}


def test_public_names_are_each_modules_all_or_what_it_defines(fake_api):
    assert fake_api.torch_version == "9.9.9"
    assert fake_api.public_modules == {
        "fakecuda": frozenset({"Stream", "current_stream", "synchronize", "streams", "flag"}),
        "fakecuda.streams": frozenset({"Stream", "current_stream"}),  # not ctypes, Callable, _hidden
        "fakecuda.extra": frozenset({"graph"}),
    }  # not fakecuda._private
    # one object under two names: decided under the shorter
    assert fake_api.same_as == {"fakecuda.streams.Stream": "fakecuda.Stream", "fakecuda.streams.current_stream": "fakecuda.current_stream"}  # fmt: skip
    decided = make_cuda_api.decisions_for(fake_api, FAKE_DECISIONS)
    assert decided["fakecuda.streams"] == decided["fakecuda.extra"] == make_cuda_api.MODULE_DECISION
    assert set(decided) == {*FAKE_DECISIONS, "fakecuda.streams", "fakecuda.extra"}
    namespace: dict = {}
    exec(compile(make_cuda_api.table_text(fake_api, FAKE_DECISIONS), "cuda_api.py", "exec"), namespace)
    assert namespace["TORCH_VERSION"] == "9.9.9"
    assert namespace["refusal"]("fakecuda.extra.graph") == "capture"
    assert namespace["decision"]("fakecuda.streams.Stream") == ("cpu", "one stream")
    assert namespace["decision"]("fakecuda.unlisted") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fakecuda.synchronize": None}, "1 public names of fakecuda have no decision: fakecuda.synchronize;"),
        ({"fakecuda.streams.Stream": ("cpu", "x")}, "fakecuda.streams.Stream (decide fakecuda.Stream)"),
        ({"fakecuda.gone": ("no-op", "x")}, "does not have as public: fakecuda.gone"),
        ({"fakecuda.flag": ("maybe", "x")}, "need a kind of"),
        ({"fakecuda.flag": ("kept", 'a "flag"')}, "without double quotes"),
    ],
)
def test_a_name_nobody_decided_on_is_an_error(fake_api, change, message):
    decisions = {**FAKE_DECISIONS, **change}
    decisions = {name: decided for name, decided in decisions.items() if decided is not None}
    with pytest.raises(make_cuda_api.TableError, match=re.escape(message)):
        make_cuda_api.table_text(fake_api, decisions)


def test_the_committed_table_decides_what_issue_30_lists():
    emulated = [
        "device", "device_of", "set_device", "current_device", "device_count", "Stream", "Event", "stream",
        "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "mem_get_info", "memory_summary",
        "get_device_properties", "get_device_capability", "get_device_name", "is_bf16_supported", "synchronize",
        "empty_cache", "manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state", "seed", "initial_seed",
        "amp.autocast", "amp.GradScaler", "nvtx.range", "nvtx.range_push", "memory.memory_allocated",
        "random.manual_seed", "streams.Event",
    ]  # fmt: skip
    for name in emulated:
        kind, how = cuda_api.decision(f"torch.cuda.{name}")
        assert kind in cuda_api.EMULATED_KINDS and how, name
    for name in ("CUDAGraph", "graphs.CUDAGraph", "graph", "nccl.all_reduce", "jiterator._create_jit_fn"):
        assert cuda_api.refusal(f"torch.cuda.{name}"), name
    assert cuda_api.decision("torch.cuda._lazy_init") is None  # not public: torch's own, as it is
    kinds = [kind for kind, _ in cuda_api.DECISIONS.values()]
    assert kinds.count("refused") < kinds.count("cpu") + kinds.count("value") + kinds.count("no-op")


def test_the_docs_give_the_tables_counts():
    kinds = [kind for kind, _ in cuda_api.DECISIONS.values()]
    emulated = sum(kind in cuda_api.EMULATED_KINDS for kind in kinds)
    counts = f"{len(kinds)} names for torch {cuda_api.TORCH_VERSION}, {emulated} emulated and {kinds.count('refused')} refused"
    assert counts in " ".join((ROOT / "docs" / "verify.md").read_text().split()), f"docs/verify.md: {counts}"


EMULATED = """\
import json, os, sys, torch
from migrate_xla.verify.child import cuda_emulation, emulation
facts = json.loads(os.environ["CUDA_FACTS"])
originals = {}
for name in facts["emulated"] + facts["kept"]:
    owner, _, attr = name.rpartition(".")
    originals[name] = getattr(__import__(owner, fromlist=["_"]), attr)
cuda_emulation._install_cuda_shim(cuda_api=facts)
emulation.EmulationMode().__enter__()
def resolve(name):
    owner, _, attr = name.rpartition(".")
    return getattr(sys.modules[owner], attr)
out = {}
out["unchanged"] = sorted(n for n in facts["emulated"] if resolve(n) is originals[n]
                          and n not in cuda_emulation.PATCHED_IN_PLACE)
out["kept_replaced"] = sorted(n for n in facts["kept"] if resolve(n) is not originals[n])
out["aliases_apart"] = sorted(a for a, n in facts["same_as"].items() if resolve(a) is not resolve(n))
refusals = {}
for name in facts["refused"]:
    value = resolve(name)
    try:
        value._create_jit_fn if name.endswith("jiterator") else value()
    except NotImplementedError as exc:
        refusals[name] = str(exc)
out["refusals"] = refusals
with torch.cuda.device(1) as context:
    out["device"] = [context.idx, torch.cuda.current_device(), torch.zeros(2, device="cuda").device.type]
with torch.cuda.device_of(torch.ones(1)):
    torch.cuda.set_device(0)
out["queries"] = [torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0),
                  list(torch.cuda.get_device_capability()), torch.cuda.is_bf16_supported()]
torch.cuda.reset_peak_memory_stats()
free, total = torch.cuda.mem_get_info()
out["memory"] = [torch.cuda.memory_allocated(), torch.cuda.memory.max_memory_allocated(),
                 torch.cuda.memory_stats()["allocated_bytes.all.peak"], 0 < free <= total,
                 torch.cuda.get_device_properties(0).total_memory == total, "no memory" in torch.cuda.memory_summary()]
torch.manual_seed(0)
first = torch.rand(1).item()
torch.manual_seed(0)
state = torch.cuda.get_rng_state()
torch.cuda.manual_seed_all(7)
out["rng"] = [torch.cuda.initial_seed(), torch.rand(1).item() == first, type(state).__name__,
              torch.cuda.random.initial_seed()]
torch.cuda.set_rng_state(state)
with torch.cuda.nvtx.range("step"):
    torch.cuda.nvtx.range_push("inner"); torch.cuda.nvtx.range_pop()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record(); end.record(); torch.cuda.synchronize()
out["event"] = start.elapsed_time(end) >= 0
class Square(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * x
    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, g):
        return g
with torch.autocast("cuda", dtype=torch.bfloat16):
    out["custom_fwd"] = str(Square.apply(torch.ones(2, dtype=torch.bfloat16)).dtype)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_the_emulation_gives_each_name_what_the_table_decides(tmp_path):
    facts = cuda_refusals.child_facts()
    facts["kept"] = sorted(name for name, (kind, _) in cuda_api.DECISIONS.items() if kind == "kept")
    env = {**os.environ, "PYTHONPATH": str(_instrumentation(tmp_path)), "CUDA_FACTS": json.dumps(facts)}
    env.pop("XLA_MIGRATE_VERIFY", None)
    done = subprocess.run(
        [sys.executable, "-c", EMULATED], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["unchanged"] == [], "names the table emulates that the shim left as torch's"
    assert out["kept_replaced"] == [] and out["aliases_apart"] == []
    assert set(out["refusals"]) == set(facts["refused"])
    for name, message in out["refusals"].items():
        assert message == f"the reference calls {name}, which cannot be emulated on the CPU ({facts['refused'][name]})"
    assert out["device"] == [0, 0, "cpu"]
    assert out["queries"] == [True, 1, "NVIDIA A100-SXM4-40GB", [8, 0], True]  # cuda_emulation.EMULATED_GPU
    assert out["memory"] == [0, 0, 0, True, True, True]
    # the device's own generator: torch.manual_seed seeds it, seeding it leaves the CPU's
    assert out["rng"] == [7, True, "Tensor", 7]
    assert out["event"] is True
    assert out["custom_fwd"] == "torch.float32"  # cast_inputs under (CPU) autocast, as on a GPU


def write_project(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_scan_resolves_imports_and_follows_local_modules(tmp_path):
    write_project(
        tmp_path,
        {
            "train.py": """
                import torch
                import torch.cuda as tc
                from torch import cuda
                from torch.cuda import CUDAGraph, graphs as g
                from models import net

                def main(x):
                    torch.cuda.synchronize()
                    graph = torch.cuda.CUDAGraph()
                    graph.replay()
                    tc.nccl.all_reduce([x])
                    cuda.memory.memory_allocated()
                    g.CUDAGraph.pool
                    torch.cuda.jiterator._create_jit_fn("code")
                    # torch.cuda.graph() in a comment, "torch.cuda.graph" in a string
                    return "torch.cuda.graph"
            """,
            "models/__init__.py": "",
            "models/net.py": "import torch as t\nfrom .layers import block\nptr = t.cuda.caching_allocator_alloc(16)\n",
            "models/layers.py": "from torch.cuda.comm import broadcast\n",
            "unused.py": "import torch\ntorch.cuda.cudart()\n",
        },
    )
    found = [(r.file.name, r.line, r.qualname) for r in cuda_refusals.scan(tmp_path / "train.py", tmp_path)]
    assert found == [
        ("train.py", 5, "torch.cuda.CUDAGraph"),
        ("train.py", 10, "torch.cuda.CUDAGraph"),
        ("train.py", 12, "torch.cuda.nccl.all_reduce"),
        ("train.py", 14, "torch.cuda.graphs.CUDAGraph"),
        ("train.py", 15, "torch.cuda.jiterator"),
        ("net.py", 3, "torch.cuda.caching_allocator_alloc"),
        ("layers.py", 1, "torch.cuda.comm.broadcast"),
    ]  # not unused.py, which nothing imports


def test_a_gpu_is_looked_for_without_torch(monkeypatch):
    assert cuda_refusals.gpu_present({"CUDA_VISIBLE_DEVICES": ""}) is False
    monkeypatch.setattr(cuda_refusals, "GPU_DRIVER_FILES", ())
    monkeypatch.setenv("PATH", "")
    assert cuda_refusals.gpu_present({}) is False
    monkeypatch.setattr(cuda_refusals, "GPU_DRIVER_FILES", (__file__,))
    assert cuda_refusals.gpu_present({}) is True
    assert cuda_refusals.gpu_present({"CUDA_VISIBLE_DEVICES": "-1"}) is False


def test_verify_refuses_before_running_a_script_that_uses_cuda_graphs(tmp_path, monkeypatch):
    """Exit 2 with the file and line of each refused name, and neither run started (the script
    would write ran.txt, and the migration never happened)."""
    monkeypatch.setattr(cuda_refusals, "gpu_present", lambda env: False)
    write_project(
        tmp_path,
        {
            "train.py": """
                import pathlib
                import torch
                from helpers import capture

                pathlib.Path("ran.txt").write_text("ran")
                model = torch.nn.Linear(2, 2)
                graph = capture(model)
            """,
            "helpers.py": """
                import torch


                def capture(model):
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        model(torch.ones(1, 2))
                    return graph
            """,
        },
    )
    monkeypatch.chdir(tmp_path)
    result = run_verify(str(tmp_path / "train.py"), "--steps", "2")
    assert result.exit_code == 2, result.output
    helpers = tmp_path / "helpers.py"
    assert (
        f"{helpers}:6: the reference calls torch.cuda.CUDAGraph, which cannot be emulated on the CPU (CUDA graphs"
        in result.output
    )
    assert f"{helpers}:7: the reference calls torch.cuda.graph, which cannot be emulated on the CPU" in result.output
    assert "--save-reference" in result.output
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_no_example_uses_a_refused_name(example):
    assert cuda_refusals.scan(example, example.parent) == []
