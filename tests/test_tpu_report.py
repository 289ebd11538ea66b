"""The TPU report (migrate_xla/verify/tpu_report.py, child/tpu_capture.py): what a TPU would
make of the migrated run's own graphs, with the user's lines.

The unit tests read a lowered graph written here in the form torch_xla 2.9 writes it
(StableHLO with its callsite locations); the slow ones run the bundled examples (a GPT, a
CNN, an LSTM) on CPU PJRT and read their report as a user would: the text and the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import FIXTURES, run_verify
from migrate_xla.verify import Settings, VerifyError, verify
from migrate_xla.verify.tpu_chips import TPUS, UnknownTpu, generation, tile_waste
from migrate_xla.verify.tpu_graphs import parse_stablehlo
from migrate_xla.verify.tpu_report import build

EXAMPLES = FIXTURES / "examples"
GPT, CNN, LSTM = EXAMPLES / "tiny_gpt.py", EXAMPLES / "mnist_cnn.py", EXAMPLES / "word_lm.py"

# A step's graph as torch_xla lowers it with XLA_HLO_DEBUG=1: a linear layer's forward product
# (its stack: Linear.forward called from train.py:12), its backward product (no stack: the
# autograd engine traced it), a convolution at HIGHEST precision, a parameter passed through.
GRAPH = """\
#loc1 = /home/user/train.py:12:0
#loc2 = /venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:134:0
#loc3 = "<module>"(#loc1)
#loc4 = "forward"(#loc2)
#loc5 = #loc4
 at #loc3
module @SyncTensorsGraph.7 attributes {mhlo.cross_program_prefetches = []} {
  func.func @main(%arg0: tensor<8x64xf32> "xla__device_data"(#loc3), %arg1: tensor<64x192xf32> \
"xla__device_data"(#loc3), %arg2: tensor<4xf32> "xla__device_data"(#loc3), %arg3: tensor<8x3x32x32xf32> \
"xla__device_data"(#loc3), %arg4: tensor<16x3x3x3xf32> "xla__device_data"(#loc3)) -> (tensor<8x192xf32>, \
tensor<4xf32>, tensor<8x16x30x30xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : \
(tensor<8x64xf32>, tensor<64x192xf32>) -> tensor<8x192xf32> "aten__mm"(#loc6)
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : \
(tensor<8x192xf32>, tensor<64x192xf32>) -> tensor<8x64xf32> "aten__mm"
    %2 = stablehlo.convolution(%arg3, %arg4) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = \
{stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, \
precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<8x3x32x32xf32>, \
tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32> "aten__convolution_overrideable"(#loc6)
    return %0, %arg2, %2 : tensor<8x192xf32>, tensor<4xf32>, tensor<8x16x30x30xf32> [unknown]
  } [unknown]
} [unknown]
#loc = [unknown]
#loc6 = "aten__mm"(#loc5)
"""


def line_of(script: Path, text: str) -> int:
    """The line of ``script`` that holds ``text`` (the examples' lines, found rather than counted)."""
    return next(n for n, line in enumerate(script.read_text().splitlines(), 1) if text in line)


def findings(report: dict, kind: str, script: Path, line: int) -> list[dict]:
    """The report's findings of ``kind`` at ``script``'s ``line``."""
    return [
        f
        for f in report["findings"]
        if f["kind"] == kind and f["file"] and Path(f["file"]).name == script.name and f["line"] == line
    ]


# -- the arithmetic -----------------------------------------------------------------------------


def test_tile_waste_pads_depth_and_columns_to_the_mxu_and_rows_to_the_sublanes():
    assert tile_waste(256, 128, 256, 128) == 0
    assert tile_waste(256, 64, 192, 128) == pytest.approx(1 - (64 * 192) / (128 * 256))  # 62.5%
    assert tile_waste(10, 128, 128, 128) == pytest.approx(1 - 10 / 16)  # rows: 10 of 16
    assert tile_waste(256, 128, 128, 256) == pytest.approx(0.75)  # v6e's 256-wide MXU holds four 128 blocks
    assert tile_waste(8, 1, 16, 128) == pytest.approx(1 - 16 / 128**2)  # a first convolution's one channel


def test_an_unknown_tpu_generation_is_an_error_that_lists_the_known(tmp_path):
    with pytest.raises(UnknownTpu, match=r"'v9'.*known are v4, v5e, v5p, v6e"):
        generation("v9")
    assert generation("V6E").mxu == 256
    script = tmp_path / "train.py"
    script.write_text("print('never run')\n")
    with pytest.raises(VerifyError, match=r"--tpu: unknown TPU generation 'v9': known are v4, v5e, v5p, v6e"):
        verify(script, [], Settings(tpu="v9"))
    result = run_verify(str(script), "--tpu", "v9")
    assert result.exit_code == 2 and "'v9' is not one of 'v4', 'v5e', 'v5p', 'v6e'" in result.output


def test_every_generation_has_the_published_figures_and_their_page():
    for tpu in TPUS.values():
        assert tpu.peak_bf16_flops > 1e14 and tpu.hbm_bytes >= 16 * 2**30 and tpu.hbm_bandwidth > 5e11
        assert tpu.mxu in (128, 256) and tpu.source == f"https://cloud.google.com/tpu/docs/{tpu.name}"


# -- reading a graph -------------------------------------------------------------------------


def test_a_graph_gives_its_products_dimensions_flops_and_stacks():
    graph = parse_stablehlo(GRAPH)
    forward, backward, convolution = graph["ops"]
    assert (forward["rows"], forward["depth"], forward["cols"], forward["flops"]) == (8, 64, 192, 2 * 8 * 64 * 192)
    assert [(f["file"], f["line"]) for f in forward["stack"]] == [
        ("/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", 134),
        ("/home/user/train.py", 12),
    ]
    assert backward["stack"] == [] and backward["flops"] == forward["flops"]
    # output 8x16x30x30, each a sum over 3 input features x 3x3 positions
    assert convolution["flops"] == 2 * 8 * 16 * 30 * 30 * 3 * 9 and convolution["precision"] == "HIGHEST"
    assert (convolution["depth"], convolution["cols"]) == (3, 16)
    # read: what an operation uses; written: results that are not a parameter passed through
    assert graph["inputs"] == [((8, 64), "f32"), ((64, 192), "f32"), ((8, 3, 32, 32), "f32"), ((16, 3, 3, 3), "f32")]
    assert graph["outputs"] == [((8, 192), "f32"), ((8, 16, 30, 30), "f32")]


def test_the_report_gives_backward_products_to_their_forward_line():
    graph = {"trigger": "sync", "what": "torch_xla.sync", "stack": [], **parse_stablehlo(GRAPH)}
    collected = {"graphs": [graph], "window": {"from_step": 3, "to_step": 4}, "state": {"parameters": 100}}
    run = SimpleNamespace(precision="float32", recompilations=0, compile_causes=[], steps_done=4)
    report = build(collected, run, TPUS["v5e"], float64=False)
    step = report["step"]
    linear = 2 * (2 * 8 * 64 * 192)  # forward and backward
    convolution = 2 * 8 * 16 * 30 * 30 * 3 * 9
    assert step["flops"] == linear + convolution and step["flops_float32"] == step["flops"]
    tile = sorted(f["flops"] for f in report["findings"] if f["kind"] == "tile" and f["line"] == 12)
    assert tile == sorted([linear, convolution])  # the linear layer's and the convolution's, one line
    assert report["findings"][0]["file"] == "/home/user/train.py"
    float32 = next(f for f in report["findings"] if f["kind"] == "float32")
    assert float32["line"] == 12
    # 8 rows a product: fewer than the MXU's 128
    assert any(f["kind"] == "batch" and f["rows"] == 8 for f in report["findings"])
    assert 0 < step["mxu_utilization"] < 1 and step["lower_bound_s"] >= step["compute_s"]


def test_no_capture_says_why():
    run = SimpleNamespace(precision="float32", recompilations=0, compile_causes=[], steps_done=2)
    report = build(None, run, TPUS["v5e"], float64=False)
    assert not report["available"] and "never reached" in report["why_not"]


# -- the examples, run ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_gpt_steps_flops_are_six_times_its_parameters_times_its_tokens(cli, tmp_path, monkeypatch):
    """The hand count of a transformer's training step: 6 FLOPs a parameter a token (2 forward,
    4 backward). tiny_gpt.py: vocabulary 64, 32 positions, width 64, 2 blocks, lm_head tied to
    the token embedding; 2 micro-batches of 8 sequences an optimizer step. ``xla-migrate
    tpu-report`` runs the migration alone, as written."""
    monkeypatch.chdir(tmp_path)
    vocab, positions, width, blocks = 64, 32, 64, 2
    block = 2 * 2 * width + (width * 3 * width + 3 * width) + (width * width + width)  # 2 LayerNorms, attention
    block += (width * 4 * width + 4 * width) + (4 * width * width + width)  # the MLP
    parameters = vocab * width + positions * width + blocks * block + 2 * width
    tokens = 2 * 8 * positions
    ran = cli("tpu-report", str(GPT), "--steps", "4", "--json", str(tmp_path / "report.json"))
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "report.json").read_text())["tpu_report"]
    assert report["available"] and report["step"]["graphs"] == 1
    flops = report["step"]["flops"]
    assert abs(flops / (6 * parameters * tokens) - 1) < 0.10, (flops, 6 * parameters * tokens)
    assert report["step"]["memory"]["parameters"] == 4 * parameters  # float32, the tied weight once
    attention_input = line_of(GPT, "self.c_attn(x)")
    assert findings(report, "tile", GPT, attention_input) and findings(report, "float32", GPT, attention_input)
    assert findings(report, "transfer", GPT, line_of(GPT, "return x.to(device"))  # the batch, each step
    assert "TPU report (v5e" in ran.output and f"tiny_gpt.py:{attention_input}: tile: " not in ran.output
    assert f"tile: tiny_gpt.py:{attention_input}: " in ran.output


@pytest.mark.slow
def test_verify_reports_a_cnns_convolutions_off_the_tiles_in_its_json(tmp_path, monkeypatch):
    """verify's own report (the JSON's tpu_report, for CI): the first convolution's one input
    channel leaves the MXU idle, the 32-row linear layer is too thin for it."""
    monkeypatch.chdir(tmp_path)
    ran = run_verify(str(CNN), "--steps", "4", "--tpu", "v6e", "--json", str(tmp_path / "r.json"))
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "r.json").read_text())["tpu_report"]
    assert report["available"] and report["tpu"]["name"] == "v6e" and report["tpu"]["mxu"] == 256
    first = findings(report, "tile", CNN, line_of(CNN, "self.conv1(x)"))
    assert first and first[0]["waste_percent"] > 99 and first[0]["depth"] == 1
    assert findings(report, "tile", CNN, line_of(CNN, "self.conv2(x)"))
    thin = findings(report, "batch", CNN, line_of(CNN, "self.fc1(x)"))
    assert thin and thin[0]["batch"] == 32 and thin[0]["rows"] == 32
    step = report["step"]
    assert step["transfers"]["loader_bytes_per_batch"] == 32 * 28 * 28 * 4 + 32 * 8  # images, labels: MpDeviceLoader
    assert step["memory"]["fits"] and 0 < step["mxu_utilization"] < 0.2
    assert "TPU report (v6e" in ran.output


@pytest.mark.slow
def test_an_lstms_report_names_its_layer_and_its_read_of_the_loss(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ran = cli(
        "tpu-report", str(LSTM), "--steps", "4", "--json", str(tmp_path / "r.json"), "--", "--cuda", "--bptt", "4",
        "--nhid", "16", "--emsize", "16",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "r.json").read_text())["tpu_report"]
    layer = line_of(LSTM, "self.rnn(emb, hidden)")
    assert findings(report, "tile", LSTM, layer) and findings(report, "batch", LSTM, layer)
    read = findings(report, "transfer", LSTM, line_of(LSTM, "total_loss += loss.item()"))
    assert read and read[0]["direction"] == "from_device"
