"""What verify does so that a training framework's script compares step by step (issue 32):
the attention's dropout drawn as every other dropout is, float64 mode under a fused
optimizer stepped by a GradScaler (transformers' default on a GPU), and the graph verify's
own stop compiles kept out of the recompilations (a Trainer zeroes its gradients before its
sync). The examples that need them, fixtures/examples/hf_trainer_fp16.py and
accelerate_fp16.py, are verified with the other examples (test_verify_examples.py)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conftest import ROOT
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.verify import Settings, verify
from migrate_xla.verify.child.float64 import Float64Mode
from migrate_xla.verify.child.rng import _attention

TINY = ROOT / "tests" / "scripts" / "tiny_mlp.py"


def _qkv(heads=4, kv_heads=4, length=6, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(2, h, length, 8, generator=generator, dtype=torch.float64) for h in (heads, kv_heads, kv_heads))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"is_causal": True},
        {"scale": 0.3},
        {"attn_mask": torch.rand(6, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)},
        {"attn_mask": torch.rand(6, 6, generator=torch.Generator().manual_seed(2)) > 0.3},
        {"enable_gqa": True},
    ],
    ids=["plain", "causal", "scale", "float-mask", "bool-mask", "gqa"],
)
def test_attention_with_dropout_is_its_math_with_the_aligned_dropout(options, monkeypatch):
    """GPT-2 in training calls scaled_dot_product_attention with dropout_p=0.1: the fused kernel
    drew that mask from its own device's generator, so the reference and the XLA run dropped
    different attention weights (verify found the first difference there at 5e-4)."""
    q, k, v = _qkv(kv_heads=2 if options.get("enable_gqa") else 4)
    calls = []

    def dropout(input, p, training):  # where the aligned dropout draws its mask (rng._dropout)
        calls.append(p)
        return input

    monkeypatch.setattr(F, "dropout", dropout)
    aligned = _attention(F.scaled_dot_product_attention)
    expected = F.scaled_dot_product_attention(q, k, v, **options)
    assert torch.allclose(aligned(q, k, v, dropout_p=0.1, **options), expected, rtol=1e-12, atol=1e-12)
    assert calls == [0.1]
    aligned(q, k, v, dropout_p=0.0, **options)  # no dropout: the kernel itself
    assert calls == [0.1]


@pytest.fixture
def float64_default():
    """float64 mode as a child installs it: float64 the default dtype too (float64._install_float64)."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(default)


def test_float64_mode_keeps_the_scale_a_grad_scaler_hands_a_fused_optimizer(float64_default):
    """transformers' default optimizer on a GPU is the fused AdamW, which takes the GradScaler's
    scale and inf flag in float32 only: in float64 mode the reference died with 'expected scalar
    type Float but found Double', and verify dropped float64 for every fp16 Trainer."""
    with Float64Mode():
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1, fused=True)
        scaler = torch.amp.GradScaler("cpu")
        before = model.weight.detach().clone()
        scaler.scale(model(torch.randn(8, 4)).pow(2).mean()).backward()
        scaler.step(optimizer)
        scaler.update()
    assert model.weight.dtype == torch.float64
    assert not torch.equal(model.weight.detach(), before)


@pytest.mark.slow
def test_a_loop_that_zeroes_its_gradients_before_its_sync_has_no_recompilation(tmp_path):
    """Verify stops a run right after its last optimizer step and syncs what is pending: there
    the gradients are still alive, where the script's own sync (after zero_grad, as the Trainer
    does it) finds none, so that last graph is new. It is verify's, not the script's: an fp16
    Trainer reported '1 graphs compiled in the second half of the run (user torch_xla.sync)'."""
    code, _ = migrate_code(TINY.read_text(), options_for())
    sync = "    optimizer.step()\n    torch_xla.sync()\n"
    assert sync in code
    migrated = tmp_path / "tiny_mlp_xla.py"
    migrated.write_text(code.replace(sync, "    optimizer.step()\n    optimizer.zero_grad()\n    torch_xla.sync()\n"))
    result = verify(TINY, [], Settings(steps=8), migrated=migrated)
    assert result.verdict == "match", result.message
    assert result.migrated.stop_compilations == 1  # the case this test is about: the stop compiled a graph
    assert result.migrated.recompilations == 0
    assert not [finding for finding in result.diagnosis if finding.kind == "recompilation"]
    assert len(result.migrated.compile_causes) == result.migrated.compilations
