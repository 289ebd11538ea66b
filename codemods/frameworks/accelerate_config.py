"""XLA827: Accelerate's config files given their TPU form. The YAML files are converted by
migrate_xla/configs/accelerate.py, which reports under this code: this rule is what
``--select``, ``--ignore``, ``per-file-ignores``, ``explain`` and docs/rules.md know of it."""

from __future__ import annotations

from migrate_xla.rule import ACCELERATE_CONFIG, SAFE, Rule

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
