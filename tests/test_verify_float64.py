"""Float64 mode on Hugging Face models (issue 39): safetensors, how transformers'
from_pretrained, PEFT and Accelerate load weights, reads a file as bytes and views them as
their dtype (`torch.asarray(storage, dtype=torch.uint8).view(dtype=torch.float32)`); made
float64, that view read half the elements and the reshape after it died ("shape '[512, 64]'
is invalid for input of size 16384"), so verify dropped float64 for every project that
loaded pretrained weights. The examples fixtures/examples/hf_bert_classifier.py and
hf_llama_causal.py are also verified with the other examples, built from their configs
(test_verify_examples.py)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from conftest import FIXTURES
from migrate_xla.verify import Settings, verify
from migrate_xla.verify.child.float64 import Float64Mode


@pytest.fixture
def float64_default():
    """float64 mode as a child installs it: float64 the default dtype too (float64._install_float64)."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(default)


def test_bytes_viewed_as_a_float_keep_the_dtype_they_are_read_in(float64_default, tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    weight = torch.randn(6, 4, dtype=torch.float32)
    save_file({"weight": weight}, tmp_path / "model.safetensors")
    with Float64Mode():
        with safe_open(tmp_path / "model.safetensors", framework="pt") as checkpoint:
            loaded = checkpoint.get_slice("weight")[...]
        raw = torch.asarray(weight.untyped_storage(), dtype=torch.uint8).view(dtype=torch.float32)
        module = torch.nn.Linear(4, 6)  # float64: the weights meet it in copy_
        with torch.no_grad():
            module.weight.copy_(loaded)
        converted = torch.asarray([1.0, 2.0], dtype=torch.float32)  # values, not bytes: float64
    assert loaded.dtype == torch.float32 and torch.equal(loaded, weight)
    assert raw.dtype == torch.float32 and torch.equal(raw.view(6, 4), weight)
    assert module.weight.dtype == torch.float64 and torch.equal(module.weight, weight.double())
    assert converted.dtype == torch.float64


def test_a_float_the_mode_made_float64_viewed_as_a_float_stays_itself(float64_default):
    """`x.view(torch.float16)` of what the script made float16: the mode made it float64, and a
    view of its 8-byte elements as 2-byte ones would have four times as many."""
    with Float64Mode():
        x = torch.randn(3, 4, dtype=torch.float16)
        views = [x.view(torch.float16), x.view(dtype=torch.bfloat16), x.view(3, 2, 2)]
    assert [tuple(v.shape) for v in views] == [(3, 4), (3, 4), (3, 2, 2)]
    assert all(v.dtype == torch.float64 for v in views)


def _save_pretrained(example: str, folder) -> None:
    """The "pretrained" float32 weights the example fine-tunes, as save_pretrained writes them."""
    spec = importlib.util.spec_from_file_location(example, FIXTURES / "examples" / f"{example}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model_class = (
        module.LlamaForCausalLM if hasattr(module, "LlamaForCausalLM") else module.BertForSequenceClassification
    )
    torch.manual_seed(0)
    model_class(module.tiny_config()).save_pretrained(folder)


@pytest.mark.slow
@pytest.mark.parametrize("example", ["hf_bert_classifier", "hf_llama_causal"])
def test_a_hugging_face_model_from_pretrained_float32_weights_matches_in_float64(example, tmp_path, monkeypatch):
    _save_pretrained(example, tmp_path / "pretrained")
    monkeypatch.chdir(tmp_path)
    script = FIXTURES / "examples" / f"{example}.py"
    result = verify(script, ["--model", str(tmp_path / "pretrained")], Settings(steps=4))
    assert result.dropped_instrument is None, result.dropped_instrument
    assert result.verdict == "match", result.message + result.reference.stderr_tail
    assert result.tolerance_source.startswith("float64")


def test_the_float64_cost_counts_matrix_products_at_a_twelfth_of_a_convolutions(float64_default, monkeypatch):
    """XLA:CPU computes float64 dots 12 times faster than float64 convolutions (and 8 to 27 times
    slower than float32 dots): a transformer's products count against the float64 budget too,
    by position or keyword, once each."""
    from migrate_xla.verify.child import float64

    budget = {"limit": 10**12, "macs": 0, "open": True, "recorder": None}
    monkeypatch.setattr(float64, "_conv_budget", budget)
    x, w = torch.randn(8, 64), torch.randn(32, 64)
    image, kernel = torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3)
    with Float64Mode():
        torch.nn.functional.linear(x, w)  # 8 x 32 outputs, 64 each
        linear = budget["macs"]
        torch.nn.functional.linear(input=x, weight=w)
        x @ w.T
        torch.addmm(torch.zeros(8, 32), x, w.T)
        products = budget["macs"]
        torch.nn.functional.conv2d(image, kernel)  # 4 x 6 x 6 outputs, 27 each
    assert linear == int(8 * 32 * 64 * float64.PRODUCT_WEIGHT)
    assert products == 4 * linear
    assert budget["macs"] - products == 4 * 6 * 6 * 27
