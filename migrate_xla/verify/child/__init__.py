"""Instrumentation inside each verify child process, installed before the user's code.

``sitecustomize`` (on the PYTHONPATH the harness injects) calls :func:`install` in
every interpreter that has ``XLA_MIGRATE_VERIFY`` in its environment, so processes the
script spawns itself (``torch_xla.launch``, ``mp.spawn``) are instrumented too. Each
process writes its own record (``<role>-<pid>.json``) and the parent merges them.

What it does:
- seeds torch, Python's ``random`` and NumPy with the one seed of the verify run, so
  both runs start from the same state (the script's own seeding still wins), and notes
  whether the script seeds at all;
- records the training loss at every ``backward()`` (the unscaled loss when a
  GradScaler multiplied it);
- counts optimizer steps (backward passes when no optimizer ever steps: a script that
  updates its parameters by hand) and stops the run cleanly after ``steps`` of them;
- aligns random numbers: random factories, in-place random fills, dropout (also
  between the layers of an RNN, LSTM or GRU) and multinomial sampling draw from the CPU
  generator in both runs, so both see the same values;
- in float64 mode (the exactness check), runs the script's floating-point work in
  float64 on both sides, so that rounding no longer hides or fakes a difference;
- at the first step, records the model's parameters (count, tied groups) and whether
  the optimizers hold them; with ``diagnose``, the norm of every parameter and gradient
  at every step;
- in the reference run without a GPU, emulates CUDA on the CPU (the shim, name by name as
  migrate_xla/generated/cuda_api.py decides; the harness passes that table's facts); in the
  migrated run of a TorchTPU migration (``--runtime torch-tpu``), emulates the "tpu"
  device and ``torch.tpu`` on the CPU the same way, without torch_xla;
- in the XLA run, reads torch_xla's metrics: compilations and executions by step, CPU
  fallbacks; and for the TPU report, one step's graphs as torch_xla lowers them, the bytes
  it moves between host and device and where from;
- on SIGTERM (the harness's timeout), writes what it recorded so far.

This package's ``__init__`` wires the parts, one module a concern:
- ``recorder``: the record of one process (losses, steps, parameters, the record file);
- ``hooks``: the hooks that feed it (backward, optimizer and GradScaler steps, autocast,
  exit, SIGTERM);
- ``seeding``: both runs seeded alike, the script's own seeding noted;
- ``rng``: random numbers drawn from the CPU generator in both runs;
- ``float64``: float64 mode (the exactness check) and its budget of convolutions;
- ``twin``: the twin of the reference, rounded as XLA rounds;
- ``compiled``: ``torch.compile`` in each run (eager in the reference, compiled for XLA in
  the migrated run, the instrumentation kept traceable or out of the graphs);
- ``op_records``: with ``diagnose``, every op on the autograd path (OpRecorder);
- ``emulation``: a device emulated on the CPU, what CUDA and TorchTPU share;
  ``cuda_emulation`` and ``tpu_emulation``: each device's own;
- ``xla_metrics``: torch_xla's metrics in the XLA run;
- ``tpu_capture``: in the XLA run, one step's graphs and transfers for the TPU report;
- ``frameworks``: in the XLA run, Accelerate's shuffled batches in the GPU's order, and on
  CPU PJRT Lightning's "tpu" accelerator admitted;
- ``shared``: what several of them share.
It imports torch and the standard library only: the harness copies the package alone
onto the children's PYTHONPATH (children._instrumentation).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading

import torch
from torch.overrides import TorchFunctionMode

from .compiled import _install_compile
from .cuda_emulation import _install_cuda_shim
from .emulation import EmulationMode
from .float64 import Float64Mode, _conv_budget, _install_float64
from .frameworks import _install_framework_admission
from .hooks import _install_hooks, _write_record_on_sigterm
from .op_records import OpRecorder, _record_ops
from .recorder import Recorder, _watch_modules
from .rng import _install_rng_alignment
from .seeding import _seed_everything
from .tpu_capture import TpuCapture
from .tpu_emulation import TpuEmulationMode, _install_tpu_shim
from .twin import TwinMode

ENV = "XLA_MIGRATE_VERIFY"


def _enter_in_every_thread(mode_types: list[type[TorchFunctionMode]]) -> None:
    """Torch function modes are per thread: push the modes in threads the script starts too."""
    for mode_type in mode_types:
        mode_type().__enter__()
    original_run = threading.Thread.run

    def run(self, *args, **kwargs):
        with contextlib.ExitStack() as stack:
            for mode_type in mode_types:
                stack.enter_context(mode_type())
            return original_run(self, *args, **kwargs)

    threading.Thread.run = run


def _device_label(recorder: Recorder, emulated: str | None) -> str:
    if emulated is not None:
        return f"cpu ({emulated} emulated)"
    if recorder.role == "migrated":
        kind = os.environ.get("PJRT_DEVICE", "CPU")
        return f"xla ({kind})"
    return f"cuda ({torch.cuda.get_device_name()})"


def _emulated_device(config: dict) -> str | None:
    """The device this run emulates on the CPU: CUDA for the reference without a GPU, "tpu"
    for the migrated run of a TorchTPU migration (config "emulate"); None: none."""
    if config["role"] == "migrated":
        return config.get("emulate")
    return "cuda" if not torch.cuda.is_available() else None


def install() -> None:
    config = json.loads(os.environ[ENV])
    recorder = Recorder(config)
    emulated = _emulated_device(config)
    recorder.device = _device_label(recorder, emulated)
    if emulated == "cuda":
        _install_cuda_shim(float64=bool(config.get("float64")), cuda_api=config.get("cuda_api"))
    elif emulated is not None:
        _install_tpu_shim(config["tpu_api"])
    elif config["role"] == "migrated":
        _install_framework_admission(recorder)  # Accelerate's batch order, Lightning on CPU PJRT (frameworks.py)
        if config.get("tpu_capture"):  # what the TPU report reads of one step (tpu_capture.py)
            recorder.tpu_capture = TpuCapture(config, recorder._named_parameters)
    if config.get("seed") is not None:
        _seed_everything(recorder, config["seed"])
    _install_hooks(recorder)
    _watch_modules(recorder)
    _install_compile(recorder, config)
    _write_record_on_sigterm(recorder)
    if config.get("align_rng", True):
        _install_rng_alignment()
    modes = [EmulationMode if emulated == "cuda" else TpuEmulationMode] if emulated else []
    if config.get("float64"):
        _install_float64()
        _conv_budget.update(limit=config.get("float64_conv_budget"), recorder=recorder)
        modes.append(Float64Mode)
    if config.get("perturb"):
        # the twin of the reference: the same float32 training rounded as XLA rounds it, batch
        # norm statistics in one pass and convolutions by other kernels, to measure how far
        # rounding alone carries it (compare.py)
        modes.append(TwinMode)
    if config.get("diagnose"):
        recorder.op_records = _record_ops(recorder)
        modes.append(OpRecorder)  # the last one entered sees each call first, as the script made it
    if modes:
        _enter_in_every_thread(modes)
