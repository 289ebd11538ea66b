"""The defects of the installed torch_xla that docs/runtime_defects.md lists, measured.

Each test runs torch and torch_xla in a child process on CPU PJRT (this process never
imports torch, as in the test_verify_*.py modules) and asserts that its defect is still there: when an
upgrade of torch_xla fixes one, its test fails, and the rule that works around it (XLA9xx,
codemods/runtime_defects/) and its row in the table can go. The workarounds the rules
write are measured in the same child: they must give the CPU's gradients.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from codemods.runtime_defects.elu_backward import HELPERS

pytestmark = pytest.mark.slow

# Each case gets inputs of its own length: torch_xla caches compiled graphs by the hash of
# their IR, and a second case of the same shape could get the first one's graph (the alpha
# of elu_backward is not in its hash: test_elu_backward_graphs_of_another_alpha_are_reused).
CHILD = """
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

DEVICE = torch_xla.device()  # before the first backward: autograd sizes its device queues then

{helpers}

CASES = {{
    "F.elu": lambda x: F.elu(x),
    "F.elu alpha=0.5": lambda x: F.elu(x, alpha=0.5),
    "F.selu": lambda x: F.selu(x),
    "F.celu alpha=2": lambda x: F.celu(x, alpha=2.0),
    "torch.selu": lambda x: torch.selu(x),
    "torch.celu alpha=2": lambda x: torch.celu(x, 2.0),
    "nn.ELU": nn.ELU(),
    "nn.SELU": nn.SELU(),
    "nn.CELU alpha=2": nn.CELU(2.0),
    "F.elu inplace": lambda x: F.elu(x * 1, inplace=True),
    "F.selu inplace": lambda x: F.selu(x * 1, inplace=True),
    "F.celu inplace alpha=2": lambda x: F.celu(x * 1, alpha=2.0, inplace=True),
    "nn.ELU inplace": lambda x: nn.ELU(inplace=True)(x * 1),
    "xla_elu": lambda x: xla_elu(x),
    "xla_elu alpha=0.5": lambda x: xla_elu(x, alpha=0.5),
    "xla_selu": lambda x: xla_selu(x),
    "xla_celu alpha=2": lambda x: xla_celu(x, 2.0),
    "XlaELU": XlaELU(),
    "XlaSELU": XlaSELU(),
    "XlaCELU alpha=2": XlaCELU(alpha=2.0),
}}
POINTS = [-2.0, -0.5, 0.0, 0.5, 2.0, 100.0]


def run(f, x, device):
    x = x.clone().to(device).requires_grad_(True)
    y = f(x)
    y.sum().backward()
    return y.detach().cpu().tolist(), x.grad.cpu().tolist()


results = {{}}
for length, (name, f) in enumerate(CASES.items(), start=len(POINTS)):
    x = torch.tensor(POINTS + [-1.0] * (length - len(POINTS)))  # a length of its own
    cpu, xla = run(f, x, "cpu"), run(f, x, DEVICE)
    results[name] = {{"cpu": [v[: len(POINTS)] for v in cpu], "xla": [v[: len(POINTS)] for v in xla]}}

# the same backward-only graph with another alpha, in one process
x = torch.tensor([-2.0, -0.5, 0.5, 2.0] + [-3.0] * 60)  # a length no case above has
first = run(lambda t: F.elu(t), x, DEVICE)[1]
second = run(lambda t: F.elu(t, alpha=0.5), x, DEVICE)[1]
results["alpha reuse"] = {{"first": first, "second": second, "cpu": run(lambda t: F.elu(t, alpha=0.5), x, "cpu")[1]}}
print("RESULTS " + json.dumps(results))
"""


def run_child(code: str) -> dict:
    """Run ``code`` with torch and torch_xla on CPU PJRT in a child process (this one never
    imports torch); what it printed after ``RESULTS ``, as JSON."""
    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULTS "))
    return json.loads(line.removeprefix("RESULTS "))


@pytest.fixture(scope="module")
def measured() -> dict:
    code = CHILD.format(helpers="\n".join(textwrap.dedent(text) for text in HELPERS.values()))
    return run_child(code)


def close(a: list[float], b: list[float], tol: float = 1e-5) -> bool:
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b, strict=True))


WRONG = ["F.elu", "F.elu alpha=0.5", "F.selu", "F.celu alpha=2", "torch.selu", "torch.celu alpha=2"]
WRONG += ["nn.ELU", "nn.SELU", "nn.CELU alpha=2"]


@pytest.mark.parametrize("case", WRONG)
def test_elu_selu_celu_backward_is_wrong_for_negative_inputs(measured, case):
    """XLA901: torch_xla 2.9.0 reads elu_backward's last argument as ELU's output, and autograd
    passes the input: the gradient at x < 0 is input_scale * (x + alpha * scale)."""
    (cpu_out, cpu_grad), (xla_out, xla_grad) = measured[case]["cpu"], measured[case]["xla"]
    assert close(xla_out, cpu_out), "the forward is right"
    assert close(xla_grad[3:], cpu_grad[3:]), "the gradient for positive inputs is right"
    assert not close(xla_grad[:2], cpu_grad[:2]), f"{case}: the backward of ELU is right now (XLA901 can go)"
    wrong = {"F.elu": -1.0, "nn.ELU": -1.0, "F.selu": -2 + 1.6732632 * 1.0507010, "F.celu alpha=2": 0.0}
    if case in wrong:  # at x = -2: input_scale * (x + alpha * scale)
        assert xla_grad[0] == pytest.approx(wrong[case], abs=1e-5)
    if case in ("F.elu", "nn.ELU"):
        assert cpu_grad[0] == pytest.approx(0.1353, abs=1e-4)


@pytest.mark.parametrize("case", ["F.elu inplace", "F.selu inplace", "F.celu inplace alpha=2", "nn.ELU inplace"])
def test_in_place_forms_are_right(measured, case):
    """Autograd passes ELU's output to elu_backward for an in-place ELU: what torch_xla reads."""
    (cpu_out, cpu_grad), (xla_out, xla_grad) = measured[case]["cpu"], measured[case]["xla"]
    assert close(xla_out, cpu_out) and close(xla_grad, cpu_grad)


@pytest.mark.parametrize(
    "case, reference",
    [
        ("xla_elu", "F.elu"),
        ("xla_elu alpha=0.5", "F.elu alpha=0.5"),
        ("xla_selu", "F.selu"),
        ("xla_celu alpha=2", "F.celu alpha=2"),
        ("XlaELU", "nn.ELU"),
        ("XlaSELU", "nn.SELU"),
        ("XlaCELU alpha=2", "nn.CELU alpha=2"),
    ],
)
def test_what_xla901_writes_gives_the_cpu_values_and_gradients(measured, case, reference):
    """On XLA as on the CPU, at 0 (ELU's gradient there is alpha) and at 100 (no NaN through
    the branch torch.where does not take) too."""
    cpu_out, cpu_grad = measured[reference]["cpu"]
    for out, grad in (measured[case]["xla"], measured[case]["cpu"]):
        assert close(out, cpu_out) and close(grad, cpu_grad), (case, grad, cpu_grad)


def test_elu_backward_graphs_of_another_alpha_are_reused(measured):
    """A second defect of the same lowering: alpha is not in the hash of elu_backward's IR
    node, so a graph that is only the backward (the input on the device, the forward not in
    it) compiled for alpha = 1 is reused for alpha = 0.5. In a training step the forward's
    ELU, whose alpha is hashed, is in the graph too; XLA901's fix avoids both."""
    reuse = measured["alpha reuse"]
    assert reuse["second"] == reuse["first"] != pytest.approx(reuse["cpu"]), "alpha is in the hash now"


def test_graph_attention_example_drifts_without_the_fix(tmp_path, monkeypatch):
    """End to end: without XLA901's fix the example's losses leave the GPU's at step 2 (7e-3
    relative in float64; 4e-2 by step 8); with it (test_verify_examples.py) they agree."""
    from conftest import EXAMPLES
    from migrate_xla.verify import Settings, verify

    (example,) = [p for p in EXAMPLES if p.stem == "graph_attention_elu"]
    monkeypatch.chdir(tmp_path)
    result = verify(example, [], Settings(steps=4, ignore=("XLA901",)))
    assert result.verdict == "mismatch", result.message
    # localised by default, no --diagnose: the first differing operation, its line, the rule
    (first,) = [f for f in result.diagnosis if f.kind == "first-op"]
    assert first.rule == "XLA901" and first.file == str(example)
    assert example.read_text().splitlines()[first.line - 1].strip().startswith(("return", "x = ", "h = ", "scores"))
    assert any(f"backward of {name} " in first.message for name in ("elu", "selu", "celu"))


BATCH_NORM = """
import json

import torch
import torch.nn.functional as F
import torch_xla

x = torch.randn(8, 4, 16, 16, generator=torch.Generator().manual_seed(0))
results = {}
for shift in (0.0, 1000.0):
    for name, device in (("cpu", "cpu"), ("xla", torch_xla.device())):
        y = F.batch_norm((x + shift).to(device), None, None, training=True).cpu()
        results[f"{name} {shift:g}"] = None if torch.isnan(y).any() else y.std(unbiased=False).item()
print("RESULTS " + json.dumps(results))
"""


def test_batch_norm_statistics_are_computed_in_one_pass():
    """torch_xla computes batch norm's variance in training as E[x^2] - E[x]^2 (XLA's
    BatchNormTraining), which cancels in float32 where the mean is large against the spread:
    at a mean of 1000 and a deviation of 1, NaN where the CPU normalizes to 1. No rule works
    around it (normalized activations rarely sit that far from 0); verify's twin rounds the
    same way to calibrate its tolerance (child/twin.py's TwinMode, compare.TWIN_FACTOR)."""
    std = run_child(BATCH_NORM)
    assert std["cpu 0"] == pytest.approx(1.0, abs=1e-3) and std["xla 0"] == pytest.approx(1.0, abs=1e-3)
    assert std["cpu 1000"] == pytest.approx(1.0, abs=1e-3)
    assert std["xla 1000"] is None or abs(std["xla 1000"] - 1.0) > 0.05, "two-pass now: the twin's rounding can go"


TRACE_CHILD = """
import copy
import json

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
results = {}
for name, module, shape in (
    ("conv", nn.Conv2d(1, 4, 3), (2, 1, 8, 8)),
    ("linear", nn.Linear(8, 4), (4, 8)),
    ("lstm", nn.LSTM(8, 8, batch_first=True), (2, 5, 8)),
):
    module = module.to(device)
    x = torch.randn(*shape, device=device)
    try:
        torch.jit.trace(module, x, check_trace=False)
        results[name] = "traced"
    except RuntimeError as exc:
        results[name] = str(exc).splitlines()[0]
    # what XLA903 gives add_graph: a CPU copy of the model and its input
    torch.jit.trace(copy.deepcopy(module).cpu(), x.cpu())
print("RESULTS " + json.dumps(results))
"""


def test_a_convolution_cannot_be_traced_on_the_device_and_its_cpu_copy_can():
    """XLA903: torch.jit.trace (TensorBoard's add_graph) of a module on the XLA device fails at a
    convolution; linear and LSTM layers trace; the CPU copy XLA903 writes traces every one."""
    results = run_child(TRACE_CHILD)
    assert results["conv"].startswith("Cannot insert a Tensor that requires grad as a constant"), (
        "a convolution traces on the XLA device now (XLA903 can go)"
    )
    assert results["linear"] == results["lstm"] == "traced"


INFERENCE_CHILD = """
import json

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
results = {}
for name, module, shape in (("linear", nn.Linear(4, 2), (3, 4)), ("lstm", nn.LSTM(4, 4), (2, 1, 4)), ("conv", nn.Conv2d(1, 2, 3), (1, 1, 5, 5))):
    module, x = module.to(device), torch.randn(*shape).to(device)
    for mode, context in (("inference_mode", torch.inference_mode), ("no_grad", torch.no_grad)):
        try:
            with context():
                module(x)
            torch_xla.sync()
            results[f"{name} {mode}"] = "ran"
        except RuntimeError as exc:
            results[f"{name} {mode}"] = str(exc).splitlines()[0]
print("RESULTS " + json.dumps(results))
"""


def test_linear_layers_cannot_run_under_inference_mode_and_do_under_no_grad():
    """XLA904: nn.Linear and nn.LSTM on the XLA device fail under torch.inference_mode(), a
    convolution runs; under torch.no_grad() (what XLA904 writes) all run."""
    results = run_child(INFERENCE_CHILD)
    failed = "Cannot set version_counter for inference tensor"
    assert results["linear inference_mode"] == results["lstm inference_mode"] == failed, (
        "a linear layer runs under inference mode on XLA now (XLA904 can go)"
    )
    assert results["conv inference_mode"] == "ran"
    assert all(results[f"{name} no_grad"] == "ran" for name in ("linear", "lstm", "conv"))


PACKED_CHILD = """
import json

import torch
import torch.nn as nn
import torch_xla
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

device = torch_xla.device()
results = {}
for name, rnn in (("lstm", nn.LSTM(4, 8, batch_first=True)), ("bilstm", nn.LSTM(4, 8, batch_first=True, bidirectional=True)), ("gru", nn.GRU(4, 8, batch_first=True)), ("rnn", nn.RNN(4, 8, batch_first=True))):
    rnn = rnn.to(device)
    x = torch.randn(3, 5, 4).to(device)
    for form in ("packed", "padded"):
        try:
            if form == "packed":
                out, _ = rnn(pack_padded_sequence(x, torch.tensor([5, 3, 2]), batch_first=True))
                out, _ = pad_packed_sequence(out, batch_first=True)
            else:
                out, _ = rnn(x)
            out.sum().backward()
            torch_xla.sync()
            results[f"{name} {form}"] = "ran"
        except (RuntimeError, AssertionError) as exc:
            results[f"{name} {form}"] = str(exc).splitlines()[0]
print("RESULTS " + json.dumps(results))
"""


def test_no_rnn_runs_on_a_packed_sequence_and_every_one_on_the_padded_batch():
    """XLA905: nn.LSTM (one or both directions) and nn.RNN on the XLA device fail on a
    PackedSequence, torch_xla's GRU asserts; on the padded batch all run."""
    results = run_child(PACKED_CHILD)
    unallocated = "The tensor has a non-zero number of elements, but its data is not allocated yet."
    assert results["lstm packed"] == results["bilstm packed"] == results["rnn packed"] == unallocated, (
        f"an RNN runs on a PackedSequence on XLA now (XLA905 can go): {results}"
    )
    assert results["gru packed"].startswith("PackedSequence is not supported")
    assert all(results[f"{name} padded"] == "ran" for name in ("lstm", "bilstm", "gru", "rnn"))


HARDSIGMOID_CHILD = """
import json

import torch
import torch.nn.functional as F
import torch_xla

from migrate_xla.verify.child.float64 import Float64Mode

results = {}
for device in (torch.device("cpu"), torch_xla.device()):
    for label, mode in (("eager", None), ("float64 mode", Float64Mode)):
        x = torch.linspace(-2.5, 2.5, 11, dtype=torch.float64).to(device)
        x.requires_grad_(True)
        if mode is None:
            y = F.hardsigmoid(x)
        else:
            with mode():
                y = F.hardsigmoid(x)
        y.sum().backward()
        torch_xla.sync()
        results[f"{device.type} {label}"] = (x.grad.cpu() * 6 - 1).abs().max().item()  # 0 where the slope is 1/6
print("RESULTS " + json.dumps(results))
"""


def test_hardsigmoid_backward_on_the_cpu_multiplies_by_a_float32_sixth_and_verifys_float64_mode_does_not():
    """Eager torch 2.9's CPU hardsigmoid backward is 2.98e-8 off in float64 (1/6 rounded to
    float32), torch_xla's is exact: a float64 reference would part from a right migration (timm's
    MobileNetV3, from step 2). verify's float64 mode computes hardsigmoid as its definition in
    both runs, exact on both devices."""
    results = run_child(HARDSIGMOID_CHILD)
    assert 1e-8 < results["cpu eager"] < 1e-7, f"the CPU's hardsigmoid backward is exact now: {results}"
    assert results["xla eager"] < 1e-15
    assert results["cpu float64 mode"] < 1e-15 and results["xla float64 mode"] < 1e-15


CHECKPOINT_CHILD = """
import json

import torch
import torch.nn as nn
import torch_xla
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.utils.checkpoint import checkpoint

{helper}

def blocks():
    torch.manual_seed(0)
    return nn.ModuleList(nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)) for _ in range(3))


def step(forward, device, grad_input, prepare=lambda model: model):
    model = prepare(blocks().to(device))
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(1)).to(device).requires_grad_(grad_input)
    h = x
    for block in model:
        h = h + forward(block, h)
    h.square().mean().backward()
    grads = [p.grad for p in model.parameters()]
    barriers = torch_xla._XLAC._get_xla_tensors_hlo(grads).count("opt-barrier") if device != "cpu" else 0
    return [g.cpu() for g in grads], barriers


results = {{}}
for label, forward in (
    ("torch", lambda b, h: checkpoint(b, h, use_reentrant=False)),
    ("torch reentrant", lambda b, h: checkpoint(b, h, use_reentrant=True, preserve_rng_state=False)),
    ("fsdp wrapper", lambda b, h: checkpoint_wrapper(b)(h)),
):
    try:
        step(forward, torch_xla.device(), True)
        results[label] = "ran"
    except Exception as exc:
        results[label] = f"{{type(exc).__name__}}: {{exc}}"
for grad_input in (True, False):
    cpu, _ = step(lambda b, h: b(h), "cpu", grad_input)
    xla, barriers = step(lambda b, h: xla_checkpoint(b, h, use_reentrant=False), torch_xla.device(), grad_input)
    results[f"written, input grad {{grad_input}}"] = {{
        "max diff": max((a - b).abs().max().item() for a, b in zip(cpu, xla)),
        "barriers": barriers,
    }}
    # FSDP's wrappers as written: each block given torch_xla's checkpointed forward in place
    apply = lambda model: xla_apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Sequential))
    xla, barriers = step(lambda b, h: b(h), torch_xla.device(), grad_input, apply)
    results[f"wrapped, input grad {{grad_input}}"] = {{
        "max diff": max((a - b).abs().max().item() for a, b in zip(cpu, xla)),
        "barriers": barriers,
    }}
print("RESULTS " + json.dumps(results))
"""


def test_torch_activation_checkpointing_fails_on_the_device_and_what_xla906_writes_trains_the_same():
    """XLA906: torch's checkpoint (reentrant or not) and FSDP's checkpoint_wrapper fail on the XLA
    device; xla_checkpoint gives the CPU's gradients, behind optimization barriers where an input
    requires a gradient (torch_xla's checkpoint), and the function run whole where none does; so
    does xla_apply_activation_checkpointing, FSDP's wrapper applied as torch_xla's checkpoint_module."""
    from codemods.runtime_defects.activation_checkpoint import APPLY_DEF, HELPER_DEF, WRAPPER_DEF

    helpers = "\n".join((HELPER_DEF, WRAPPER_DEF, APPLY_DEF))
    results = run_child(CHECKPOINT_CHILD.format(helper=helpers.replace("{", "{{").replace("}", "}}")))
    missing = ("AttributeError: module 'torch' has no attribute 'xla'", "RuntimeError: torch has no module of `xla`")
    assert all(results[form].startswith(missing) for form in ("torch", "torch reentrant", "fsdp wrapper")), (
        f"torch's checkpoint runs on XLA now (XLA906 can go): {results}"
    )
    with_grad, without = results["written, input grad True"], results["written, input grad False"]
    assert with_grad["max diff"] < 1e-6 and without["max diff"] < 1e-6
    # three blocks checkpointed; without a gradient of the input, the first runs whole
    assert with_grad["barriers"] == 12 and without["barriers"] == 8
    # and so do FSDP's wrappers, written as xla_apply_activation_checkpointing
    wrapped, wrapped_without = results["wrapped, input grad True"], results["wrapped, input grad False"]
    assert wrapped["max diff"] < 1e-6 and wrapped_without["max diff"] < 1e-6, results
    # checkpoint_module's forward puts 8 barriers on a block (its arguments packed with their
    # count): the three blocks checkpointed, the first run whole where the input needs no gradient
    assert wrapped["barriers"] == 24 and wrapped_without["barriers"] == 16, results
