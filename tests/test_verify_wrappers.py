"""Issue 39: what verify installs in its children must not change what the script calls.

Every function verify replaces in a child (torch, torch.cuda, Tensor and Module methods,
torch.distributed, the frameworks' entry points, ...) must accept every call the function it
replaces accepts, by position or by keyword, and pass each on the same whichever form the
caller chose (a graph-learning library's ``torch.load(f, map_location, weights_only=...)``
died in the reference run: "load() got multiple values for argument 'map_location'").

The wrappers are discovered, not listed: a child takes a snapshot of every module of torch
(and of the standard library and the frameworks verify patches) and of every class in them,
installs the instruments as the run's ``sitecustomize`` does, and compares. Each attribute
that changed is a wrapper, walked with each split of the replaced function's own signature
into positional and keyword arguments (``inspect.signature``; for torch's builtins, the
signature their documentation states). A wrapper that passes the call on (the replaced
function is in its closure) runs with that function swapped for a stub that binds the call by
the replaced function's signature and records it; one that does not is bound by its own.

Then the emulated GPU: one model (``cuda_emulation.EMULATED_GPU``, an A100) answers every
capability question alike, in torch.cuda, in transformers' and Lightning's and Accelerate's
checks (transformers' ``TrainingArguments(tf32=True)`` needs an Ampere GPU), and in the
decisions of migrate_xla/generated/cuda_api.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate_xla.generated import cuda_api
from migrate_xla.verify import cuda_refusals
from migrate_xla.verify.children import _instrumentation, tpu_facts

pytestmark = pytest.mark.slow  # each test runs child processes that import torch

WALK = r'''
import importlib, inspect, json, keyword, os, re, sys, types

import torch

config = json.loads(os.environ["WALK_CONFIG"])
DEVICE = config.pop("walk_device")  # the device this run's script names: the emulated one, or XLA
for name in config.pop("import_first", []):
    importlib.import_module(name)  # a framework module verify patches where it is imported
PREFIXES = ("torch", "numpy", "random", "threading", "accelerate", "lightning", "lightning_fabric", "torch_xla")


def namespaces():
    """Every module of PREFIXES, and every class one of them defines or names (by its own name)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".")[0] not in PREFIXES:
            continue
        found.setdefault(id(module), (name, module))
        for value in list(vars(module).values()):
            if isinstance(value, type):
                found.setdefault(id(value), (f"{value.__module__}.{value.__qualname__}", value))
    return list(found.values())


before = [(name, owner, dict(vars(owner))) for name, owner in namespaces()]
snapshots = {id(owner): old for _, owner, old in before}
os.environ["XLA_MIGRATE_VERIFY"] = json.dumps(config)
from migrate_xla.verify import child

child.install()  # as sitecustomize does in a verify run


def replaced(owner, attr, old):
    """What ``owner.attr`` was before the instruments: its own, or (a method a class gets
    now) its bases'."""
    if attr in old:
        return old[attr]
    for base in owner.__mro__[1:] if isinstance(owner, type) else ():  # torch.ops' namespaces answer any name
        found = snapshots.get(id(base), vars(base))
        if attr in found:
            return found[attr]
    return None


wrappers = {}
for name, owner, old in before:
    for attr, value in list(vars(owner).items()):
        original = replaced(owner, attr, old)
        if original is None or value is original or not callable(original) or not callable(value):
            continue
        names, *_ = wrappers.setdefault((id(original), id(value)), ([], owner, attr, original, value))
        names.append(f"{name}.{attr}")


class Arg:
    """A value no wrapper reads: it only travels."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"

    def __call__(self, *args, **kwargs):
        return self


def tensor():
    return torch.full((2,), 0.5)


SAMPLES = {
    # the emulated device, wherever a call names it: the wrappers make it the CPU
    "device": DEVICE, "map_location": f"{DEVICE}:0", "device_type": DEVICE, "backend": "nccl",
    "init_method": "env://", "device_ids": [0], "output_device": 0,
    # tensors a wrapper reads
    "input": tensor, "tensors": tensor, "outputs": tensor, "probs": tensor,
    "query": lambda: torch.ones(1, 1, 2, 2), "key": lambda: torch.ones(1, 1, 2, 2),
    "value": lambda: torch.ones(1, 1, 2, 2),
    # options as torch documents their defaults
    "generator": None, "out": None, "dtype": None, "layout": torch.strided, "requires_grad": False,
    "pin_memory": False, "memory_format": torch.preserve_format, "num_samples": 1, "replacement": True,
    "attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None, "enable_gqa": False,
    "p": 0.5, "training": True, "inplace": False, "seed": 0, "model": lambda: (lambda x: x),
    "optimizer": lambda: torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1),
}


def sample(owner, parameter):
    if parameter.name == "self":
        return tensor() if isinstance(owner, type) and issubclass(owner, torch.Tensor) else Arg("self")
    if parameter.name in SAMPLES:
        value = SAMPLES[parameter.name]
        return value() if isinstance(value, types.FunctionType) else value  # a new one each time
    if parameter.default is not inspect.Parameter.empty:
        return parameter.default
    return Arg(parameter.name)


def documented(function, owner):
    """The signature torch's documentation gives a builtin (the first line of its docstring)."""
    doc, name = inspect.getdoc(function) or "", getattr(function, "__name__", "")
    start = re.search(rf"^{re.escape(name)}\(", doc, re.M)
    if not start:
        return None
    depth, end = 1, start.end()
    while depth and end < len(doc):
        depth += {"(": 1, ")": -1}.get(doc[end], 0)
        end += 1
    text = doc[start.end() : end - 1].replace("\\*", "*").replace("\n", " ")
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    P = inspect.Parameter
    method = inspect.ismethoddescriptor(function) and isinstance(owner, type)
    parameters = [P("self", P.POSITIONAL_ONLY)] if method else []  # a method's documentation leaves it out
    kind, unspellable = P.POSITIONAL_OR_KEYWORD, False
    for part in filter(None, parts):
        if part == "*":
            kind = P.KEYWORD_ONLY
            continue
        star = len(part) - len(part.lstrip("*"))
        word = re.match(r"\w+", part.lstrip("*"))
        if not word or keyword.iskeyword(word.group()):
            unspellable = True  # a name Python cannot spell (``from=0``): the positional ones stop here
            continue
        if unspellable and kind is P.POSITIONAL_OR_KEYWORD:
            continue
        if star:
            parameters.append(P(word.group(), P.VAR_POSITIONAL if star == 1 else P.VAR_KEYWORD))
            kind = P.KEYWORD_ONLY
            continue
        default = P.empty
        if "=" in part:
            text_default = part.split("=", 1)[1].strip()
            try:
                default = eval(text_default, {"torch": torch})
            except Exception:
                default = text_default
        parameters.append(P(word.group(), kind, default=default))
    return inspect.Signature(parameters, __validate_parameters__=False)


def signature_of(function, owner):
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return documented(function, owner)


def forms(owner, signature, method):
    """Each split of the call into positional and keyword arguments: every parameter given
    (the first k by position, the rest by keyword), then the required ones only. A method's
    instance comes by position."""
    P = inspect.Parameter
    given = [p for p in signature.parameters.values() if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
    try:
        inspect.Signature(given)
        groups = {"all": given, "required": [p for p in given if p.default is P.empty]}
    except ValueError:  # a documented signature with a required argument after an optional one
        groups = {"all": given}
    result = []
    for group, parameters in groups.items():
        values = {p.name: sample(owner, p) for p in parameters}
        positional = [p for p in parameters if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
        first = max(sum(p.kind is P.POSITIONAL_ONLY for p in positional), int(method and bool(positional)))
        for k in range(first, len(positional) + 1):
            args = [values[p.name] for p in positional[:k]]
            kwargs = {p.name: values[p.name] for p in parameters if p not in positional[:k]}
            result.append((group, k, args, kwargs))
    return result


def normal(value):
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)}"
    if isinstance(value, dict):
        return {key: normal(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normal(item) for item in value]
    return repr(value)


def cells_holding(function, target):
    """The closure cells of ``function`` that hold ``target`` (what it passes the call on to)."""
    return [cell for cell in (getattr(function, "__closure__", None) or ()) if cell.cell_contents is target]


report = {"wrappers": [], "unchecked": [], "failures": [], "forwarded": {}}
for names, owner, attr, original, installed in sorted(wrappers.values(), key=lambda item: item[0]):
    qualname = names[0]
    signature = signature_of(original, owner)
    if signature is None:
        report["unchecked"].extend(names)
        continue
    report["wrappers"].extend(names)
    method = isinstance(owner, type) and inspect.isroutine(original) and not isinstance(original, staticmethod)
    target = getattr(original, "__func__", original)
    function = getattr(installed, "__func__", installed)
    cells = cells_holding(function, target)
    if not cells:  # it does not pass the call on: it must accept what the original accepts
        try:
            own = inspect.signature(installed)
        except (TypeError, ValueError):
            report["unchecked"].append(qualname)
            continue
        for group, k, args, kwargs in forms(owner, signature, method):
            try:
                signature.bind(*args, **kwargs)
            except TypeError:
                continue  # the walk's own form is not one the original takes
            try:
                own.bind(*args, **kwargs)
            except TypeError as exc:
                report["failures"].append([qualname, group, k, f"refuses the call: {exc}"])
        continue
    calls = {}
    for group, k, args, kwargs in forms(owner, signature, method):
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            continue
        seen = []

        def stub(*a, **kw):
            bound = signature.bind(*a, **kw)  # TypeError: a call the original refuses
            seen.append({name: normal(value) for name, value in bound.arguments.items()})
            return torch.zeros(2)

        for cell in cells:
            cell.cell_contents = stub
        try:
            function(*args, **kwargs)
        except NotImplementedError:
            pass  # a refused name raises by design, having taken the call
        except Exception as exc:
            report["failures"].append([qualname, group, k, f"{type(exc).__name__}: {exc}"[:300]])
            continue
        finally:
            for cell in cells:
                cell.cell_contents = target
        calls.setdefault(group, []).append(seen)
    report["forwarded"][qualname] = calls
    for group, seen in calls.items():
        if any(call != seen[0] for call in seen):
            report["failures"].append([qualname, group, None, f"passes on another call by form: {seen}"[:600]])
print("WALK " + json.dumps(report))
'''


def walk(tmp_path: Path, config: dict, device: str, import_first=()) -> dict:
    """The walk in a child process, the instruments installed with ``config``."""
    records = tmp_path / "records"
    records.mkdir(parents=True, exist_ok=True)
    config = {"record_dir": str(records), "steps": 1000, "seed": 0, "align_rng": True, **config}
    env = {**os.environ, "PYTHONPATH": str(_instrumentation(tmp_path)), "PJRT_DEVICE": "CPU", "USE_TORCH_XLA": "0"}
    env["WALK_CONFIG"] = json.dumps({**config, "import_first": list(import_first), "walk_device": device})
    env.pop("XLA_MIGRATE_VERIFY", None)
    done = subprocess.run(
        [sys.executable, "-c", WALK], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("WALK "))
    return json.loads(line.removeprefix("WALK "))


def assert_walked(report: dict, expected: set[str]) -> None:
    assert expected <= set(report["wrappers"]), f"not discovered: {expected - set(report['wrappers'])}"
    assert report["failures"] == [], "\n".join(map(str, report["failures"]))


def test_the_reference_runs_wrappers_take_every_call_the_originals_take(tmp_path):
    """The reference run without a GPU (CUDA emulated, float64, random numbers aligned)."""
    config = {"role": "reference", "float64": True, "cuda_api": cuda_refusals.child_facts()}
    report = walk(tmp_path, config, "cuda", import_first=("torch.distributed.fsdp",))
    assert_walked(
        report,
        {
            "torch.load",
            "torch.distributed.device_mesh.init_device_mesh",
            "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.__init__",
            "torch.amp.autocast_mode.autocast.__init__",
            "torch.amp.grad_scaler.GradScaler.__init__",
            "torch.amp.custom_fwd",
            "torch.distributed.init_process_group",
            "torch.nn.parallel.distributed.DistributedDataParallel.__init__",
            "torch.cuda.get_device_capability",
            "torch.cuda.device_of",
            "torch.cuda.Event",
            "torch.multinomial",
            "torch.randn_like",
            "torch.bernoulli",
            "torch.compile",
            "torch.autograd.backward",
        },
    )
    assert len(report["wrappers"]) > 150
    # torch.load(f, "cuda:0") and torch.load(f, map_location="cuda:0") load onto the CPU alike
    for group in report["forwarded"]["torch.load"].values():
        assert [call[0]["map_location"] for call in group] == ["'cpu'"] * len(group)


def test_the_migrated_runs_wrappers_take_every_call_the_originals_take(tmp_path):
    """The XLA run (Accelerate's and Lightning's entry points patched where imported) and the
    TorchTPU emulation."""
    report = walk(
        tmp_path / "xla",
        {"role": "migrated", "float64": True},
        "xla",
        import_first=("torch_xla", "accelerate.data_loader", "lightning.fabric.accelerators.xla"),
    )
    assert_walked(report, {"accelerate.data_loader.prepare_data_loader", "torch.compile", "torch.multinomial"})
    report = walk(tmp_path / "tpu", {"role": "migrated", "emulate": "tpu", "tpu_api": tpu_facts()}, "tpu")
    assert_walked(report, {"torch.load", "torch.amp.autocast_mode.autocast.__init__", "torch.Tensor.pin_memory"})


ANSWERS = """
import dataclasses, json, os, sys, torch
if "cpu-build" in sys.argv:  # installed here, once torch is a CPU build (sitecustomize did nothing)
    torch.version.cuda = None  # as a CPU build of torch has it
    os.environ["XLA_MIGRATE_VERIFY"] = os.environ.pop("ANSWERS_CONFIG")
    from migrate_xla.verify import child
    child.install()
from migrate_xla.verify.child.cuda_emulation import EMULATED_GPU
from transformers import TrainingArguments
from transformers.utils import import_utils
from lightning.fabric.accelerators.cuda import _is_ampere_or_later
from accelerate.utils import check_cuda_fp8_capability, is_bf16_available

args = TrainingArguments(output_dir="out", tf32=True, bf16=True, report_to=[])
properties = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info()
out = {
    "table": dataclasses.asdict(EMULATED_GPU),
    "training_arguments": [args.tf32, args.bf16, str(args.device)],
    "name": [torch.cuda.get_device_name(), torch.cuda.get_device_name(0), properties.name],
    "capability": [list(torch.cuda.get_device_capability()), [properties.major, properties.minor]],
    "multi_processor_count": properties.multi_processor_count,
    "memory": [properties.total_memory, free, total],
    "bf16": [torch.cuda.is_bf16_supported(), torch.cuda.is_bf16_supported(including_emulation=False),
             import_utils.is_torch_bf16_gpu_available(), is_bf16_available()],
    "tf32": [torch.cuda.is_tf32_supported(), import_utils.is_torch_tf32_available()],
    "lightning_ampere": _is_ampere_or_later(),
    "accelerate_fp8": check_cuda_fp8_capability(),
    "cuda_version": torch.version.cuda,
    # torch's own code still sees no GPU, and its own build's CUDA version
    "torch_sees": [eval("torch.cuda.is_available()", {"__name__": "torch._probe", "torch": torch}),
                   eval("torch.version.cuda", {"__name__": "torch._probe", "torch": torch})],
}
print("ANSWERS " + json.dumps(out))
"""


@pytest.mark.parametrize("build", ["as-installed", "cpu-build"])
def test_the_emulated_gpu_answers_as_one_model_everywhere(tmp_path, build):
    """The reference child, instrumented as verify instruments it: transformers'
    ``TrainingArguments(tf32=True)`` constructs ("--tf32 requires Ampere or a newer GPU arch"
    before), and every capability answer is the table's; with a CPU build of torch too
    (``torch.version.cuda`` None, which transformers' TF32 check reads)."""
    records = tmp_path / "records"
    records.mkdir()
    config = {
        "role": "reference",
        "record_dir": str(records),
        "steps": 1000,
        "seed": 0,
        "float64": True,
        "cuda_api": cuda_refusals.child_facts(),
    }
    env = {**os.environ, "PYTHONPATH": str(_instrumentation(tmp_path)), "USE_TORCH_XLA": "0"}
    env.pop("XLA_MIGRATE_VERIFY", None)
    if build == "cpu-build":
        env["ANSWERS_CONFIG"] = json.dumps(config)
    else:  # installed by sitecustomize, as in a verify run
        env["XLA_MIGRATE_VERIFY"] = json.dumps(config)
    done = subprocess.run(
        [sys.executable, "-c", ANSWERS, build], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("ANSWERS "))
    out = json.loads(line.removeprefix("ANSWERS "))
    table = out["table"]
    assert table["name"] == "NVIDIA A100-SXM4-40GB" and table["capability"] == [8, 0]
    assert out["training_arguments"] == [True, True, "cuda:0"]
    assert out["name"] == [table["name"]] * 3
    assert out["capability"] == [table["capability"]] * 2
    assert out["multi_processor_count"] == table["multi_processor_count"]
    properties_memory, free, total = out["memory"]
    assert properties_memory == total and 0 < free <= total <= table["total_memory"]
    assert out["bf16"] == [table["bf16"]] * 4
    assert out["tf32"] == [table["tf32"]] * 2
    assert out["lightning_ampere"] is (table["capability"][0] >= 8)
    assert out["accelerate_fp8"] is False  # FP8 needs 8.9: the A100 trains in bf16 or fp16
    assert out["torch_sees"][0] is False
    if build == "cpu-build":
        assert out["cuda_version"] == table["cuda_version"] and out["torch_sees"][1] is None
    # the decisions of migrate_xla/generated/cuda_api.py say what the table answers
    name = cuda_api.decision("torch.cuda.get_device_name")[1]
    assert name.startswith(table["name"])
    assert cuda_api.decision("torch.cuda.get_device_capability")[1].startswith(str(tuple(table["capability"])))
    properties = cuda_api.decision("torch.cuda.get_device_properties")[1]
    major, minor = table["capability"]
    assert f"major {major}, minor {minor}, {table['multi_processor_count']} multiprocessors" in properties
    assert f"{table['total_memory'] // 2**20} MiB" in properties
    assert cuda_api.decision("torch.cuda.is_bf16_supported")[1].startswith(str(table["bf16"]))
    assert cuda_api.decision("torch.cuda.is_tf32_supported")[1].startswith(str(table["tf32"]))


def test_the_walk_finds_the_issue_39_crash(tmp_path):
    """The walk fails on the torch.load wrapper verify had (map_location read by keyword only)."""
    folder = _instrumentation(tmp_path / "old")
    emulation = folder / "migrate_xla" / "verify" / "child" / "emulation.py"
    text = emulation.read_text()
    start, end = text.index("    load = torch.load\n"), text.index("    torch.load = load_on_cpu\n")
    old = """\
    load = torch.load

    def load_on_cpu(*args, map_location=None, **kwargs):
        if callable(map_location):
            map_location = "cpu"
        return load(*args, map_location=_on_cpu(map_location, emulated), **kwargs)

"""
    emulation.write_text(text[:start] + old + text[end:])
    env = {**os.environ, "PYTHONPATH": str(folder), "PJRT_DEVICE": "CPU", "USE_TORCH_XLA": "0"}
    records = tmp_path / "records"
    records.mkdir()
    config = {"role": "reference", "record_dir": str(records), "steps": 1000, "seed": 0, "float64": False}
    env["WALK_CONFIG"] = json.dumps({**config, "cuda_api": cuda_refusals.child_facts(), "walk_device": "cuda"})
    env.pop("XLA_MIGRATE_VERIFY", None)
    done = subprocess.run(
        [sys.executable, "-c", WALK], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("WALK "))[5:])
    failures = [failure for failure in report["failures"] if failure[0] == "torch.load"]
    assert any("multiple values for argument 'map_location'" in failure[3] for failure in failures), report["failures"]
