"""Accelerate's config files given the form accelerate 1.15 reads on a TPU VM (XLA827,
docs/frameworks.md): what ``accelerate config`` writes (``default_config.yaml``) or a
project keeps for ``accelerate launch --config_file``.

A file is such a config when it is YAML (``.yaml``, ``.yml``) with a top-level
``distributed_type:`` key, which accelerate requires of every config. It is edited line by
line, as text: comments, key order, quoting and line ends stay as they are, and no YAML
library is needed (accelerate writes a flat mapping of ``key: value`` lines, sorted, with
its nested settings indented under ``dynamo_config:``, ``fsdp_config:``, ...).

On a TPU VM accelerate trains with ``distributed_type: XLA`` (``accelerate launch`` then
runs the script's ``main_training_function`` in one process per chip, through torch_xla's
launcher), computes in bfloat16 with ``mixed_precision: bf16`` (float16 is refused there:
"fp16 mixed precision requires a device in ..."), and has no use for the GPU ids or NVIDIA's
NUMA affinity. A config for a GPU (``MULTI_GPU``, or ``NO``: one device) gets those values;
what has no TPU form (DeepSpeed, FSDP, Megatron-LM, FP8, a compiler backend, several GPU
machines) is flagged with a ``# TODO(xla-migrate): XLA827 ...`` comment above its line. A
config for the CPU (``use_cpu: true``) or for other accelerators is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from migrate_xla.findings import ACCELERATE_CONFIG, Diagnostic

# accelerate's configs are a few hundred bytes: a larger YAML file is something else, and is
# not read past this while walking a folder
MAX_BYTES = 64 * 1024
_SIGNATURE = re.compile(rb"^distributed_type[ \t]*:", re.M)
# one ``key: value  # comment`` line of a block mapping, its line end kept
_ENTRY = re.compile(
    r"(?P<indent>[ \t]*)(?P<key>[A-Za-z_][\w.-]*)(?P<colon>[ \t]*:[ \t]*)"
    r"(?P<value>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^#\s][^#\r\n]*?|)(?P<rest>[ \t]*(?:#[^\r\n]*)?)(?P<end>\r\n|\r|\n|)\Z"
)
TODO = "# TODO(xla-migrate): XLA827 "
# Suppression comments, as in Python files (docs/configuration.md): a noqa comment naming
# XLA827 (or none) ending a line leaves that line; an xla-migrate noqa line, the whole file.
_CODES = r"(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_LINE_NOQA = re.compile(rf"#\s*noqa(?::\s*{_CODES})?(?![\w-])", re.IGNORECASE)
_FILE_NOQA = re.compile(rf"^[ \t]*#\s*xla-migrate:\s*noqa(?::\s*{_CODES})?\s*$", re.IGNORECASE | re.MULTILINE)
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


def is_config_file(path: Path, unreadable: bool = False) -> bool:
    """Whether the YAML file at ``path`` is an accelerate config (read up to MAX_BYTES); one
    that cannot be read is ``unreadable``: not one while walking (a folder's other YAML files
    are no concern of this tool's), one to read (and fail on, saying why) when named."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return unreadable
    return len(data) <= MAX_BYTES and is_config(data)


class _Entry:
    """One ``key: value`` line: where it is, its parts, its value without quotes."""

    def __init__(self, index: int, match: re.Match) -> None:
        self.index = index
        self.match = match
        raw = match["value"]
        self.quote = raw[0] if raw[:1] in ("'", '"') else ""
        self.value = raw[1:-1] if self.quote else raw

    def line(self, value: str) -> str:
        """The line with ``value`` in place of its value, quoted as it was."""
        m = self.match
        return f"{m['indent']}{m['key']}{m['colon']}{self.quote}{value}{self.quote}{m['rest']}{m['end']}"

    def shown(self) -> str:
        return f"`{self.match['key']}: {self.match['value']}`"


class _Edit:
    """The config's lines and what the migration does to them."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.top: dict[str, _Entry] = {}  # top-level keys
        self.nested: dict[tuple[str, str], _Entry] = {}  # (section, key) of an indented line
        section = None
        for index, line in enumerate(self.lines):
            match = _ENTRY.match(line)
            if match is None:
                continue
            if match["indent"]:
                if section is not None:
                    self.nested.setdefault((section, match["key"]), _Entry(index, match))
            else:
                section = match["key"]
                self.top.setdefault(section, _Entry(index, match))
        self.replaced: dict[int, str] = {}
        self.findings: list[Diagnostic] = []
        self.silenced = any(_silences(m) for m in _FILE_NOQA.finditer(text))

    def value(self, key: str) -> str | None:
        entry = self.top.get(key)
        return entry.value if entry is not None else None

    def set(self, entry: _Entry, value: str, why: str) -> None:
        self.change(entry, entry.line(value), f"{entry.shown()} -> `{entry.match['key']}: {value}`: {why}")

    def drop(self, entry: _Entry, why: str) -> None:
        self.change(entry, "", f"{entry.shown()} dropped: {why}")

    def change(self, entry: _Entry, line: str, message: str) -> None:
        """``entry``'s line becomes ``line`` (nothing: dropped), unless a comment silences it."""
        if not self._found(entry, message, fixed=True):
            self.replaced[entry.index] = line

    def flag(self, entry: _Entry, message: str) -> None:
        above = self.lines[entry.index - 1] if entry.index else ""
        if self._found(entry, message, fixed=False) or above.lstrip().startswith(TODO):  # one comment, never two
            return
        end = entry.match["end"] or "\n"
        self.replaced[entry.index] = f"{entry.match['indent']}{TODO}{message}{end}" + self.replaced.get(
            entry.index, self.lines[entry.index]
        )

    def _found(self, entry: _Entry, message: str, fixed: bool) -> bool:
        """Report ``message`` at ``entry``; whether a suppression comment silences it."""
        noqa = _LINE_NOQA.search(entry.match["rest"])
        silenced = self.silenced or (noqa is not None and _silences(noqa))
        self.findings.append(
            Diagnostic(
                code=ACCELERATE_CONFIG,
                message=message,
                line=entry.index + 1,
                column=len(entry.match["indent"]) + 1,
                severity="info" if fixed and not silenced else "warning",
                fixed=fixed and not silenced,
                fix="safe" if fixed else None,
                suppressed=silenced,
            )
        )
        return silenced

    def text(self) -> str:
        return "".join(self.replaced.get(index, line) for index, line in enumerate(self.lines))


def migrate(text: str, runtime: str = "torch-xla") -> tuple[str, list[Diagnostic]]:
    """The config ``text`` in its TPU form, and the findings; a file that is no GPU config
    (or no config) comes back as it is, without findings."""
    config = _Edit(text)
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


def _silences(noqa: re.Match) -> bool:
    """Whether a suppression comment covers XLA827: without codes, or naming it or a prefix of it."""
    codes = noqa["codes"]
    return codes is None or any(ACCELERATE_CONFIG.startswith(c.upper()) for c in re.split(r"[\s,]+", codes) if c)


def _distribution(config: _Edit, kind: _Entry) -> None:
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


def _precision(config: _Edit) -> None:
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
