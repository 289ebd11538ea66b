"""migrate_xla/generated/xla_ops.py, what the installed torch_xla can run of the sparse-tensor APIs
XLA902 handles, and its generator make_xla_ops.py.

The generator imports torch and torch_xla; this process never does (the rewriter must not):
it runs in a child process, as verify's children do.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from codemods.runtime_defects import sparse_tensors
from conftest import ROOT
from migrate_xla.generated import xla_ops
from migrate_xla.generators import make_xla_ops

HOW = {"kernel", "composite", "cpu-fallback", "none"}
HAS_TORCH_XLA = importlib.util.find_spec("torch_xla") is not None


def child(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    command = [sys.executable, *(("-c", code) if code is not None else args)]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def load(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "xla_ops.py", "exec"), namespace)
    return namespace


@pytest.mark.skipif(not HAS_TORCH_XLA, reason="torch_xla is not installed (the verify extra)")
def test_the_committed_table_is_what_the_installed_torch_xla_gives():
    out = child("-m", "migrate_xla.generators.make_xla_ops", "--print")
    assert out.returncode == 0, out.stderr
    assert make_xla_ops.TABLE.read_text(encoding="utf-8") == out.stdout, (
        f"migrate_xla/generated/xla_ops.py is stale for the installed torch_xla: {make_xla_ops.REGENERATE}"
    )


def test_every_api_of_the_curated_map_is_classified():
    assert list(xla_ops.APIS) == list(make_xla_ops.CURATED)
    for api, operators in xla_ops.APIS.items():
        assert operators, f"{api}: no aten operator traced"
        for operator in operators:
            assert xla_ops.OPERATORS[operator] in HOW, (api, operator)
        assert xla_ops.runs_on_xla(api) is (api not in xla_ops.CANNOT_RUN)
    assert xla_ops.CANNOT_RUN <= set(xla_ops.APIS)
    assert xla_ops.runs_on_xla("torch.nn.functional.relu") is None  # not in the table: it does not say


def test_the_table_says_what_torch_xla_2_9_does_with_sparse_tensors():
    """No kernel and no fallback for the sparse keys: every sparse API is out; the dense
    forms XLA902 writes have torch_xla's own kernels."""
    assert (xla_ops.SPARSE_XLA_KERNELS, xla_ops.SPARSE_XLA_FALLBACK) == (frozenset(), False)
    assert (xla_ops.SPARSE_CSR_XLA_KERNELS, xla_ops.SPARSE_CSR_XLA_FALLBACK) == (frozenset(), False)
    assert xla_ops.XLA_FALLBACK and {"aten::mm", "aten::addmm", "aten::sum.dim_IntList"} <= xla_ops.XLA_KERNELS
    assert not xla_ops.runs_on_xla("torch.spmm") and not xla_ops.runs_on_xla("Tensor.to_sparse")
    assert xla_ops.APIS["torch.sparse_coo_tensor"] == ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",)
    assert xla_ops.OPERATORS["aten::mm SparseXLA"] == "none" and xla_ops.OPERATORS["aten::mm XLA"] == "kernel"


def test_xla902_handles_what_the_table_says_xla_cannot_run():
    """Each API the table marks is converted or flagged by the rule, and the dense forms its
    fix writes are ones the table says XLA runs."""
    handled = {
        *sparse_tensors.CONSTRUCTORS,
        *sparse_tensors.LEGACY,
        *sparse_tensors.DENSE_FORMS,
        *sparse_tensors.BY_HAND,
        *(f"Tensor.{method}" for method in sparse_tensors.TO_SPARSE),
        f"Tensor.{sparse_tensors.COALESCE}",
    }
    assert handled == xla_ops.CANNOT_RUN
    assert set(sparse_tensors.CUDA_LEGACY.values()) == sparse_tensors.LEGACY
    for form in set(sparse_tensors.DENSE_FORMS.values()):
        assert xla_ops.runs_on_xla(f"torch.{form}"), form


FACTS = {
    "torch": "9.9.0",
    "torch_xla": "9.9.1",
    "kernels": {"XLA": ["aten::add.Tensor", "aten::mm"], "SparseXLA": [], "SparseCsrXLA": ["aten::mm"]},
    "fallback": {"XLA": True, "SparseXLA": False, "SparseCsrXLA": False},
    "operators": {
        ("aten::_to_sparse", "SparseXLA"): "none",
        ("aten::mm", "SparseCsrXLA"): "kernel",
        ("aten::mm", "XLA"): "kernel",
        ("aten::zeros", "XLA"): "composite",
    },
    "apis": {
        "Tensor.to_sparse": [("aten::_to_sparse", "SparseXLA")],
        "torch.sparse.mm": [("aten::zeros", "XLA"), ("aten::mm", "SparseCsrXLA")],
        "torch.mm": [("aten::mm", "XLA")],
    },
}


def test_the_generator_writes_a_table_from_facts():
    """A sparse key with kernels holds sparse tensors: an API whose operators it has runs."""
    generated = load(make_xla_ops.table_text(FACTS))
    assert generated["TORCH_XLA_VERSION"] == "9.9.1"
    assert generated["SPARSE_CSR_XLA_KERNELS"] == {"aten::mm"} and generated["SPARSE_XLA_KERNELS"] == frozenset()
    assert generated["XLA_KERNELS"] == {"aten::add.Tensor", "aten::mm"}
    assert generated["CANNOT_RUN"] == {"Tensor.to_sparse"}
    assert generated["APIS"]["torch.sparse.mm"] == ("aten::zeros XLA", "aten::mm SparseCsrXLA")
    assert generated["runs_on_xla"]("torch.sparse.mm") and not generated["runs_on_xla"]("Tensor.to_sparse")


def test_the_generator_says_it_needs_torch_xla(monkeypatch, capsys):
    def missing():
        raise ImportError("No module named 'torch_xla'")

    monkeypatch.setattr(make_xla_ops, "read_installed", missing)
    assert make_xla_ops.main([]) == 1
    assert "needs torch and torch_xla" in capsys.readouterr().err
    assert make_xla_ops.main(["--nonsense"]) == 2


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TORCH_XLA, reason="torch_xla is not installed (the verify extra)")
def test_a_sparse_matrix_cannot_move_to_the_device_and_the_dense_form_runs_there():
    """The defect, measured: the move of a sparse COO matrix raises NotImplementedError naming
    SparseXLA; what XLA902 writes (the matrix made dense on the CPU, torch.mm) gives torch.spmm's
    values on the device, with no operator run on the CPU."""
    code = textwrap.dedent(
        """
        import json
        import torch
        import torch_xla
        import torch_xla.debug.metrics as met

        device = torch_xla.device()
        index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 2]])
        values = torch.tensor([0.5, 0.5, 0.25, 1.0])
        x = torch.arange(6.0).reshape(3, 2)
        sparse = torch.sparse_coo_tensor(index, values, (3, 3))
        try:
            sparse.to(device)
            error = ""
        except NotImplementedError as exc:
            error = str(exc)
        met.clear_all()
        dense = torch.sparse_coo_tensor(index, values, (3, 3)).to_dense().to(device)
        product = torch.mm(dense, x.to(device)).cpu()
        print(json.dumps({
            "error": error,
            "same": torch.equal(product, torch.spmm(sparse, x)),
            "fallbacks": met.executed_fallback_ops(),
        }))
        """
    )
    out = child(code=code)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "'SparseXLA' backend" in result["error"]
    assert result["same"] and result["fallbacks"] == []
