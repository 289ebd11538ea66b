"""XLA828: Lightning Trainer configs (YAML) given their TPU form. The files are converted by
migrate_xla/configs/lightning.py, which reports under this code: this rule is what
``--select``, ``--ignore``, ``per-file-ignores``, ``explain`` and docs/rules.md know of it."""

from __future__ import annotations

from migrate_xla.rule import LIGHTNING_CONFIG, SAFE, Rule

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
    TRIGGERS = (NEVER,)
    # A config file, not a script: tests/test_codemods.py migrates it as config.yaml.
    BEFORE = "defaults:\n  - default\n\naccelerator: gpu\ndevices: 1\nprecision: 16-mixed\n"
    EXAMPLE_LANGUAGE = "yaml"
    AFTER = "defaults:\n  - default\n\naccelerator: tpu\ndevices: 1\nprecision: 32-true\n"
