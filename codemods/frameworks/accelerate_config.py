"""Accelerate's config files given the form accelerate 1.15 reads on a TPU VM (XLA827,
docs/frameworks.md): what ``accelerate config`` writes (``default_config.yaml``) or a
project keeps for ``accelerate launch --config_file``.

A file is such a config when it is YAML (``.yaml``, ``.yml``) with a top-level
``distributed_type:`` key, which accelerate requires of every config. It is edited line by
line (lines.py: accelerate writes a flat mapping of ``key: value`` lines, sorted, with its
nested settings indented under ``dynamo_config:``, ``fsdp_config:``, ...).

On a TPU VM accelerate trains with ``distributed_type: XLA`` (``accelerate launch`` then
runs the script's ``main_training_function`` in one process per chip, through torch_xla's
launcher), computes in bfloat16 with ``mixed_precision: bf16`` (float16 is refused there:
"fp16 mixed precision requires a device in ..."), and has no use for the GPU ids or NVIDIA's
NUMA affinity. A config for a GPU (``MULTI_GPU``, or ``NO``: one device) gets those values;
what has no TPU form (DeepSpeed, FSDP, Megatron-LM, FP8, a compiler backend, several GPU
machines) is flagged with a ``# TODO(xla-migrate): XLA827 ...`` comment above its line. A
config for the CPU (``use_cpu: true``) or for other accelerators is left as it is.

The rule class below is what ``--select``, ``--ignore``, ``per-file-ignores``, ``explain`` and
docs/rules.md know of it; the engine finds the YAML kinds through it (``is_config``, ``convert``).
"""

from __future__ import annotations

import re

from migrate_xla.rule.api import ACCELERATE_CONFIG, SAFE, Diagnostic, Edit, Entry, Rule

_SIGNATURE = re.compile(rb"^distributed_type[ \t]*:", re.M)
GUIDE = "https://huggingface.co/docs/accelerate/concept_guides/training_tpu"

# accelerate's distributed types that mean NVIDIA GPUs (NO: one device, a GPU unless use_cpu)
ON_GPUS = ("MULTI_GPU", "NO", "FSDP", "DEEPSPEED", "MEGATRON_LM")
NO_TPU_FORM = {
    "FSDP": "accelerate's FSDP is PyTorch's on CUDA devices (NCCL)",
    "DEEPSPEED": "DeepSpeed runs CUDA kernels over NCCL",
    "MEGATRON_LM": "Megatron-LM runs CUDA kernels over NCCL",
}


def is_config(data: bytes) -> bool:
    """Whether ``data`` (a YAML file's bytes) is an accelerate config: a top-level ``distributed_type:``."""
    return _SIGNATURE.search(data) is not None


def migrate(text: str, runtime: str = "torch-xla") -> tuple[str, list[Diagnostic]]:
    """The config ``text`` in its TPU form, and the findings; a file that is no GPU config
    (or no config) comes back as it is, without findings."""
    config = Edit(text, ACCELERATE_CONFIG)
    kind = config.top.get("distributed_type")
    if kind is None:
        return text, []
    gpu = kind.value in ON_GPUS and config.value("use_cpu") not in ("true", "True", "yes")
    if not gpu and kind.value not in ("XLA", "TPU"):
        return text, []  # the CPU's, or another accelerator's
    environment = config.top.get("compute_environment")
    if environment is not None and environment.value not in ("LOCAL_MACHINE", ""):
        if gpu:
            config.flag(
                environment,
                f"{environment.shown()}: a SageMaker config, and SageMaker has no TPUs: write a config for "
                f"the TPU VM (`accelerate config` there, or `compute_environment: LOCAL_MACHINE` with "
                f"`distributed_type: XLA`); see {GUIDE}",
            )
        return config.text(), config.findings
    if runtime != "torch-xla":
        if gpu:
            config.flag(
                kind,
                "Accelerate picks its device itself and knows no TorchTPU device (accelerate 1.15: its TPU path is "
                "PyTorch/XLA's), so this config would train on the CPU: migrate with `--runtime torch-xla`, or "
                "train without Accelerate on `torch.device('tpu')`; see docs/frameworks.md",
            )
        return config.text(), config.findings
    _distribution(config, kind)
    _precision(config)
    gpu_ids = config.top.get("gpu_ids")
    if gpu_ids is not None:
        config.drop(gpu_ids, "it picks CUDA devices (CUDA_VISIBLE_DEVICES); on a TPU VM torch_xla trains on its chips")
    affinity = config.top.get("enable_cpu_affinity")
    if affinity is not None and affinity.value in ("true", "True", "yes"):
        config.set(affinity, "false", "the NUMA affinity accelerate sets is NVIDIA GPUs' only")
    backend = config.nested.get(("dynamo_config", "dynamo_backend"))
    if backend is not None and backend.value.upper() not in ("NO", ""):
        config.set(
            backend,
            "NO",
            "XLA records the whole training step and compiles it as one graph, which is what the compiler was "
            "there for, and the backend cannot run on XLA (inductor writes GPU or CPU code; accelerate 1.15's "
            "TORCHXLA_TRACE_ONCE names a backend torch 2.9 no longer registers); XLA810 drops torch.compile "
            "the same way (docs/decisions.md, 'torch.compile on XLA')",
        )
    return config.text(), sorted(config.findings, key=lambda d: (d.line, d.column))


def _distribution(config: Edit, kind: Entry) -> None:
    if kind.value in ("MULTI_GPU", "TPU"):
        why = (
            "accelerate 1.15 names PyTorch/XLA's type XLA (TPU is refused)"
            if kind.value == "TPU"
            else "`accelerate launch` runs the script's `main_training_function` (main) in one process per TPU "
            "chip through torch_xla's launcher, on every chip of the VM whatever `num_processes` says"
        )
        config.set(kind, "XLA", f"{why}; see {GUIDE}")
    elif kind.value in NO_TPU_FORM:
        config.flag(
            kind,
            f"{kind.shown()}: {NO_TPU_FORM[kind.value]}: set `distributed_type: XLA` (data parallel over the "
            "chips) and shard the model in the script with PyTorch/XLA's FSDP or SPMD (docs/targets.md)",
        )
    machines = config.top.get("num_machines")
    if kind.value != "NO" and machines is not None and machines.value.isdigit() and int(machines.value) > 1:
        config.flag(
            machines,
            f"{machines.shown()}: GPU machines joined by torchrun's rendezvous (main_process_ip): on a TPU pod "
            "set `tpu_use_cluster: true` with `tpu_name` and `tpu_zone`, and accelerate starts the script on "
            f"every host; see {GUIDE}",
        )


def _precision(config: Edit) -> None:
    precision = config.top.get("mixed_precision")
    legacy = config.top.get("fp16")  # accelerate's old key, still read: fp16: true is mixed_precision: fp16
    if precision is None and legacy is not None and legacy.value in ("true", "True", "yes"):
        line = f"mixed_precision: bf16{legacy.match['rest']}{legacy.match['end']}"
        config.change(legacy, line, f"{legacy.shown()} -> `mixed_precision: bf16`: {_BF16}")
    elif precision is not None and precision.value == "fp16":
        config.set(precision, "bf16", _BF16)
    elif precision is not None and precision.value == "fp8":
        config.flag(precision, f"{precision.shown()}: TPUs have no FP8: `mixed_precision: bf16`; see {GUIDE}")


_BF16 = (
    "on XLA devices Accelerate computes in bfloat16, which needs no loss scaler (it refuses float16 on a TPU); "
    f"see {GUIDE}"
)


NEVER = r"\A(?!)"  # no Python file wakes it: the files it converts are YAML


class AccelerateConfig(Rule):
    """Accelerate's config files (``accelerate config``'s ``default_config.yaml``, or a
    project's own for ``accelerate launch --config_file``) get the values accelerate 1.15
    takes on a TPU VM.

    A YAML file (``.yaml``, ``.yml``) of at most 64 KB with a top-level ``distributed_type:``
    (accelerate requires one of every config) is such a config: walking a folder takes
    those, and any other YAML file, named on the command line or not (pre-commit names every
    staged one), is left unread. The file is edited line by line, keeping its comments,
    order, quoting and line ends; suppression comments work as in Python files. For a GPU config (``MULTI_GPU``; ``NO``, one device, unless
    ``use_cpu: true``): ``distributed_type: MULTI_GPU`` -> ``XLA`` (``accelerate launch``
    then runs the script's ``main_training_function`` in one process per TPU chip through
    torch_xla's launcher; the old name ``TPU``, which accelerate 1.15 refuses, -> ``XLA``);
    ``mixed_precision: fp16`` (or the old ``fp16: true``) -> ``bf16`` (Accelerate refuses
    float16 on a TPU and computes in bfloat16 without a loss scaler, as XLA826 does in
    code); ``gpu_ids`` dropped (CUDA's device list); ``enable_cpu_affinity: true`` ->
    ``false`` (NVIDIA's NUMA affinity). Flagged with a TODO comment above the line:
    ``DEEPSPEED``, ``FSDP`` and ``MEGATRON_LM`` (CUDA kernels over NCCL: ``XLA``, and shard
    in the script with PyTorch/XLA's FSDP or SPMD), ``mixed_precision: fp8``,
    ``num_machines`` above 1 (a TPU pod is ``tpu_use_cluster: true`` with ``tpu_name`` and
    ``tpu_zone``), and a SageMaker config (no TPUs there). A ``dynamo_backend`` other than
    ``NO`` becomes ``NO``, as XLA810 drops ``torch.compile``: XLA compiles the whole step as
    one graph already, and the backend cannot run there (inductor writes GPU code, and
    accelerate's TORCHXLA_TRACE_ONCE names a backend torch 2.9 no longer has). A config for
    the CPU or another accelerator is left as it is.

    Under ``--runtime torch-tpu``: accelerate 1.15 knows no TorchTPU device, so a GPU config
    is flagged, not converted (docs/frameworks.md). Accelerate's TPU guide:
    https://huggingface.co/docs/accelerate/concept_guides/training_tpu
    """

    CODE = ACCELERATE_CONFIG
    NAME = "accelerate-config"
    SUMMARY = (
        "Accelerate's config YAML: distributed_type: MULTI_GPU -> XLA, mixed_precision: fp16 -> bf16, gpu_ids "
        "dropped, dynamo_backend -> NO; DeepSpeed, FSDP, FP8, several machines flagged"
    )
    FIX = SAFE
    is_config = staticmethod(is_config)
    convert = staticmethod(migrate)
    TRIGGERS = (NEVER,)
    # A config file, not a script: tests/test_codemods.py migrates it as config.yaml.
    BEFORE = (
        "compute_environment: LOCAL_MACHINE\n"
        "distributed_type: MULTI_GPU\n"
        "gpu_ids: all\n"
        "mixed_precision: fp16\n"
        "num_processes: 8\n"
    )
    EXAMPLE_LANGUAGE = "yaml"
    AFTER = "compute_environment: LOCAL_MACHINE\ndistributed_type: XLA\nmixed_precision: bf16\nnum_processes: 8\n"
