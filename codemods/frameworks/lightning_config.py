"""Lightning Trainer settings kept in YAML (XLA828, docs/frameworks.md), in the form Lightning
2.6 takes on XLA devices: what XLA820-XLA822 do to ``Trainer(...)`` in Python, for the Trainers a
config builds (Hydra's ``hydra.utils.instantiate``, LightningCLI), which the Python rules never
see. A project template's ``configs/trainer/gpu.yaml`` (``accelerator: gpu``, chosen with
``trainer=gpu`` on the command line) left as it was stops the migrated run with
"MisconfigurationException: No supported gpu backend found!".

A file is such a config when it is YAML with ``accelerator: gpu`` (or ``cuda``) at its top level
(a Hydra trainer group's file, whose ``_target_`` may come from the default it extends) or in a
top-level ``trainer:`` section (LightningCLI's config, a Hydra main config). In that scope:
``accelerator`` -> ``tpu``; ``devices: -1`` -> ``auto``, and a count above 1 or a list of several
flagged (Lightning on XLA takes 1, ``auto``, the host's count or one index); mixed precision
(``16``, ``16-mixed``, ``bf16``, ``bf16-mixed``) -> ``32-true`` (TPUs multiply float32 in
bfloat16), ``16-true`` -> ``bf16-true``, 64-bit flagged; ``strategy: ddp`` (its spawn, fork,
notebook and find-unused forms, ``dp``) dropped (Lightning picks ``XLAStrategy``), ``fsdp`` ->
``xla_fsdp``, DeepSpeed flagged; ``benchmark`` dropped (cuDNN's autotuner); ``sync_batchnorm:
true`` flagged (SyncBatchNorm raises on XLA devices). Under ``--runtime torch-tpu`` the
accelerator is flagged: lightning 2.6 has no accelerator for TorchTPU's device.

The rule class below is what ``--select``, ``--ignore``, ``per-file-ignores``, ``explain`` and
docs/rules.md know of it; the engine finds the YAML kinds through it (``is_config``, ``convert``).
"""

from __future__ import annotations

import re

from migrate_xla.rule.api import LIGHTNING_CONFIG, SAFE, Diagnostic, Edit, Entry, Rule

GUIDE = "https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html"
GPU = ("gpu", "cuda")
_SIGNATURE = re.compile(rb"""^[ \t]*accelerator[ \t]*:[ \t]*['"]?(?:gpu|cuda)['"]?[ \t]*(?:#[^\r\n]*)?\r?$""", re.M)
MIXED = ("16", "16-mixed", "bf16", "bf16-mixed")
DDP = re.compile(r"ddp(_spawn|_fork|_notebook)?(_find_unused_parameters_(true|false))?$|dp$")
TRUE = ("true", "True", "yes")


def is_config(data: bytes) -> bool:
    """Whether ``data`` (a YAML file's bytes) may be a Lightning Trainer config: a line
    ``accelerator: gpu`` (or ``cuda``); ``migrate`` reads whether it is at the top level or in
    the ``trainer:`` section."""
    return _SIGNATURE.search(data) is not None


def migrate(text: str, runtime: str = "torch-xla") -> tuple[str, list[Diagnostic]]:
    """The config ``text`` in its TPU form, and the findings; a file with no GPU Trainer settings
    comes back as it is, without findings."""
    config = Edit(text, LIGHTNING_CONFIG)
    for scope in (config.top, {key: e for (section, key), e in config.nested.items() if section == "trainer"}):
        accelerator = scope.get("accelerator")
        if accelerator is None or accelerator.value.lower() not in GPU:
            continue
        if runtime != "torch-xla":
            config.flag(
                accelerator,
                "lightning 2.6 has no accelerator for TorchTPU's `tpu` device (its \"tpu\" is PyTorch/XLA's): "
                "migrate with `--runtime torch-xla`, or train without the Trainer; see docs/frameworks.md",
            )
            continue
        config.set(
            accelerator,
            "tpu",
            "Lightning's XLA accelerator places the model and the batches on the XLA device and cuts each step "
            f"into a graph; see {GUIDE}",
        )
        _devices(config, scope.get("devices"))
        _precision(config, scope.get("precision"))
        _strategy(config, scope)
    return config.text(), sorted(config.findings, key=lambda d: (d.line, d.column))


def _devices(config: Edit, devices: Entry | None) -> None:
    if devices is None:
        return
    value = devices.value.strip()
    if value == "-1":
        config.set(devices, "auto", "all of the host's XLA devices")
    elif (value.isdigit() and int(value) > 1) or (value.startswith("[") and "," in value):
        config.flag(
            devices,
            f"{devices.shown()}: Lightning on XLA devices takes 1, `auto` (all of the host's), their count or one "
            f"`[i]`, and refuses other counts: use 1 or `auto` (the global batch is then the batch size times the "
            f"devices used); see {GUIDE}",
        )


def _precision(config: Edit, precision: Entry | None) -> None:
    if precision is None:
        return
    value = precision.value
    if value in MIXED:
        config.set(
            precision,
            "32-true",
            "Lightning's XLA precision takes 32-true, 16-true and bf16-true only; the weights stay float32 and a "
            "TPU multiplies float32 matrices in bfloat16, what mixed precision buys on a GPU, with no loss scaler",
        )
    elif value == "16-true":
        config.set(precision, "bf16-true", "bfloat16 is the TPU's half type")
    elif value in ("64", "64-true") or value.startswith("transformer-engine"):
        config.flag(precision, f"{precision.shown()} has no TPU form (no float64, no FP8 kernels): use `32-true`")


def _strategy(config: Edit, scope: dict[str, Entry]) -> None:
    strategy = scope.get("strategy")
    if strategy is not None and DDP.match(strategy.value):
        config.drop(strategy, "with no strategy Lightning picks XLAStrategy (one process a device) on XLA devices")
    elif strategy is not None and strategy.value == "fsdp":
        config.set(strategy, "xla_fsdp", "XLAFSDPStrategy, PyTorch/XLA's FSDP")
    elif strategy is not None and strategy.value.startswith("deepspeed"):
        config.flag(strategy, f"{strategy.shown()}: DeepSpeed runs CUDA kernels: drop it (XLAStrategy) or `xla_fsdp`")
    benchmark = scope.get("benchmark")
    if benchmark is not None:
        config.drop(benchmark, "cuDNN's autotuner: XLA compiles its own kernels")
    sync = scope.get("sync_batchnorm")
    if sync is not None and sync.value in TRUE:
        config.flag(
            sync,
            f"{sync.shown()} wraps BatchNorm layers in torch.nn.SyncBatchNorm, which raises on XLA devices once "
            "several train: set it false (each device normalises its own batch)",
        )


NEVER = r"\A(?!)"  # no Python file wakes it: the files it converts are YAML


class LightningConfig(Rule):
    """Lightning Trainer settings kept in YAML get the values XLA820-XLA822 give a
    ``Trainer(...)`` written in Python: the Trainers a config builds (a Hydra project
    template's ``configs/trainer/gpu.yaml``, chosen with ``trainer=gpu``; a LightningCLI
    config's ``trainer:`` section) are never seen by the Python rules, and left ``accelerator:
    gpu`` the migrated run stops with "No supported gpu backend found!" (ashleve's
    lightning-hydra-template, docs/realworld.md).

    A YAML file (``.yaml``, ``.yml``, at most 64 KB) with ``accelerator: gpu`` (or ``cuda``) at
    its top level or in a top-level ``trainer:`` section is such a config; walking a folder
    takes those, and any other YAML file is left unread. The file is edited line by line,
    keeping its comments, order, quoting and line ends; suppression comments work as in
    Python files. In the scope of that accelerator: ``accelerator`` -> ``tpu``; ``devices:
    -1`` -> ``auto`` (a count above 1 or a list of several is flagged: Lightning on XLA takes
    1, ``auto``, the host's count or one index); mixed precision (``16``, ``16-mixed``,
    ``bf16``, ``bf16-mixed``) -> ``32-true`` and ``16-true`` -> ``bf16-true`` (XLA821: a TPU
    multiplies float32 in bfloat16; Lightning's XLA precision refuses the mixed ones);
    ``strategy: ddp`` and its forms (and ``dp``) dropped, ``fsdp`` -> ``xla_fsdp`` (XLA822);
    ``benchmark`` dropped (cuDNN's autotuner). Flagged: DeepSpeed, 64-bit and FP8 precision,
    ``sync_batchnorm: true`` (SyncBatchNorm raises on XLA devices). Settings the config gets
    elsewhere (a command-line override, another file of the group) are not followed.

    Under ``--runtime torch-tpu``: lightning 2.6 has no accelerator for TorchTPU's ``tpu``
    device, so the accelerator is flagged, not converted (docs/frameworks.md).
    """

    CODE = LIGHTNING_CONFIG
    NAME = "lightning-config"
    SUMMARY = (
        "Lightning Trainer configs in YAML (Hydra, LightningCLI): accelerator: gpu -> tpu, mixed precision -> "
        "32-true, strategy: ddp dropped; several devices, DeepSpeed, sync_batchnorm flagged"
    )
    FIX = SAFE
    is_config = staticmethod(is_config)
    convert = staticmethod(migrate)
    TRIGGERS = (NEVER,)
    # A config file, not a script: tests/test_codemods.py migrates it as config.yaml.
    BEFORE = "defaults:\n  - default\n\naccelerator: gpu\ndevices: 1\nprecision: 16-mixed\n"
    EXAMPLE_LANGUAGE = "yaml"
    AFTER = "defaults:\n  - default\n\naccelerator: tpu\ndevices: 1\nprecision: 32-true\n"
