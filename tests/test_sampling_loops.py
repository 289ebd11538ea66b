"""A sampling loop inside training (issue 22, class 8): XLA705 cuts it every token, and the
migrated trainer compiles a bounded number of graphs however often it samples."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.verify import assert_loss_parity

SAMPLER = FIXTURES / "examples" / "char_sampling_loop.py"


def test_the_sampling_loop_of_the_example_is_cut_after_the_crop_and_before_the_concatenation():
    code, findings = migrate_code(SAMPLER.read_text(), options_for())
    loop = code[code.index("for _ in range(args.sample_tokens):") :]
    lines = [line.strip() for line in loop.splitlines()[1:7]]
    assert lines == [
        "window = text if text.size(1) <= args.block_size else text[:, -args.block_size :]",
        "torch_xla.sync()",
        "last = model(window)[:, -1, :]",
        "choice = torch.argmax(last, dim=-1, keepdim=True)",
        "torch_xla.sync()",
        "text = torch.cat((text, choice), dim=1)",
    ]
    assert [f.code for f in findings if f.code == "XLA705"] == ["XLA705"]
    assert all(f.fixed for f in findings if f.code == "XLA705")


@pytest.mark.slow
def test_sampling_four_times_compiles_the_graphs_of_one_sampling_pass(tmp_path, monkeypatch):
    """100 tokens from a 2-token prompt, block size 16, sampled after steps 2, 4, 6 and 8.

    Per pass: a graph of the model for each length up to the block size (15, then one for
    every cropped window), and a small graph a token for the crop and the concatenation,
    whose shapes grow: about 115. The later passes reuse them all, so nothing compiles in the
    second half of the steps. Before the cut, each pass was one graph of 100 forward passes
    (minGPT's chargpt: 500 tokens of a 6-layer model, which did not compile in 15 minutes)."""
    monkeypatch.chdir(tmp_path)
    result = assert_loss_parity(SAMPLER, "--sample-every", "2", steps=8)
    migrated = result.migrated
    tokens, block_size, training = 100, 16, 10  # training: the step's graphs, the reads of the loss
    assert migrated.compilations <= tokens + block_size + training, migrated
    assert migrated.recompilations == 0  # the passes after steps 6 and 8 compile nothing
    assert migrated.executions >= 3 * 2 * tokens  # every token ran as graphs of its own, in each pass


def test_verify_draws_multinomial_samples_from_the_cpu_generator_the_same_way_on_every_device():
    """A trainer that samples text between its steps: both runs must draw the same tokens from
    the CPU generator, or the dropout masks of every later step differ (minGPT's chargpt, which
    samples with torch.multinomial after step 0, diverged at step 2)."""
    import torch

    from migrate_xla.verify.child.rng import _multinomial

    def refuse(*args, **kwargs):
        raise AssertionError("the device's own sampler was called")

    aligned = _multinomial(refuse)
    probs = torch.softmax(torch.randn(3, 7, generator=torch.Generator().manual_seed(0)), -1)
    draws = []
    for dtype in (torch.float32, torch.float64):
        torch.manual_seed(1)
        draws.append(aligned(probs.to(dtype), 1))
    assert draws[0].shape == (3, 1) and draws[0].dtype == torch.int64 and torch.equal(draws[0], draws[1])
    torch.manual_seed(2)
    many = aligned(probs[:1].expand(20000, 7), 1).view(-1)
    assert (torch.bincount(many, minlength=7) / 20000.0 - probs[0]).abs().max() < 0.02
    assert aligned(torch.tensor([0.0, 0.0, 1.0]), 1).tolist() == [2]
    assert aligned(probs, 4, replacement=True).shape == (3, 4)
    with pytest.raises(AssertionError, match="own sampler"):
        aligned(probs, 4)  # without replacement: left to torch
