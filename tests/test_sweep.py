"""A slim sweep over real code: benchmarks/sweep.py on a fixed sample of torch files.

The full sweep (`make sweep`, every file of torch and torch_xla) takes most of an hour
here; this sample covers the CUDA-heavy modules and the files where the sweep found
bugs, with unsafe fixes under each runtime: no failure, every written file compiles, a second run
changes nothing.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import ROOT

SAMPLE = [
    "torch/amp/autocast_mode.py",
    "torch/amp/grad_scaler.py",
    "torch/backends/cuda/__init__.py",
    "torch/backends/cudnn/__init__.py",
    "torch/cuda/amp/grad_scaler.py",
    "torch/cuda/graphs.py",
    "torch/cuda/jiterator.py",
    "torch/cuda/nvtx.py",
    "torch/cuda/profiler.py",
    "torch/cuda/random.py",
    "torch/cuda/streams.py",
    "torch/hub.py",
    "torch/nn/parallel/data_parallel.py",
    "torch/nn/utils/rnn.py",
    "torch/optim/swa_utils.py",
    "torch/random.py",
    "torch/testing/_internal/common_cuda.py",
    "torch/utils/benchmark/utils/timer.py",
    "torch/utils/data/_utils/pin_memory.py",
    "torch_xla/amp/syncfree/adam.py",
    "torch_xla/debug/profiler.py",
    "torch_xla/distributed/fsdp/xla_fully_sharded_data_parallel.py",
    "torch_xla/distributed/parallel_loader.py",
]


def _sweep_module():
    spec = importlib.util.spec_from_file_location("sweep", ROOT / "benchmarks" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sweep"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("torch", "torch_xla")),
    reason="needs torch and torch_xla installed",
)
def test_sweep_of_a_torch_sample(tmp_path):
    sweep = _sweep_module()
    roots = {name: sweep.package_dir(name) for name in sweep.PACKAGES}
    modes = ["torch-xla/unsafe", "torch-tpu/unsafe"]
    tallies = sweep.sweep(roots, modes, jobs=2, workdir=tmp_path, only=SAMPLE)
    for mode in modes:
        tally = tallies[mode]
        assert tally.failures == [], mode
        assert tally.files == len(SAMPLE) and tally.changed >= 10 and tally.fixed >= 20, mode
    # What the full sweep found: a dtype list that names both half types stays as it is
    # (XLA405 made it [torch.float32, torch.bfloat16, torch.bfloat16]).
    fsdp = (
        tmp_path / "torch-xla" / "unsafe" / "torch_xla" / "distributed" / "fsdp" / "xla_fully_sharded_data_parallel.py"
    ).read_text()
    assert "FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]" in fsdp
