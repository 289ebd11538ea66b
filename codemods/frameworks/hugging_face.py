"""XLA824-XLA826: Hugging Face's ``TrainingArguments``, ``from_pretrained`` options and
Accelerate's ``Accelerator`` given the values their XLA path takes (transformers' and
Accelerate's TPU guides; transformers 4.57 and accelerate 1.15 are what they must fit)."""

from __future__ import annotations

import libcst as cst

from codemods.frameworks.common import ACCELERATE_TPU, HF_TPU, literal, renamed, shown, with_value, without
from migrate_xla.rule.api import SAFE, Rule, call_arg, code_of, names_trigger, snippet, words

TRAINING_ARGUMENTS = frozenset(
    f"transformers{module}.{name}"
    for name in ("TrainingArguments", "Seq2SeqTrainingArguments")
    for module in ("", ".training_args", ".training_args_seq2seq")
)
ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
NO_TORCH_TPU = (
    "{what} picks its device itself and knows no TorchTPU device ({package}: its TPU path is "
    "PyTorch/XLA's), so it would train on the CPU: migrate this script with `--runtime torch-xla`, or "
    "train without it on `{device}`; see docs/frameworks.md"
)


def _true(arg: cst.Arg | None) -> bool:
    return arg is not None and code_of(arg.value) == "True"


class HfTrainingArguments(Rule):
    """``TrainingArguments`` set up for CUDA GPUs get the values transformers' XLA path takes.

    transformers trains on the XLA device whenever torch_xla is importable (its TPU guide),
    and there float16 has no use: TPUs compute in bfloat16, which needs no loss scaler
    (the migration guide's "Automatic Mixed Precision"). Converted: ``fp16=True`` ->
    ``bf16=True`` (``fp16_full_eval`` -> ``bf16_full_eval``); ``fp16_opt_level`` and
    ``half_precision_backend`` dropped (apex's and the CUDA GradScaler's settings);
    ``optim="adamw_torch_fused"`` and ``"adamw_apex_fused"`` -> ``"adamw_torch"`` (fused CUDA
    kernels), and ``optim="adamw_torch"`` added where none is given (transformers 4.57's default
    on torch 2.8 and later is the fused AdamW, which refuses XLA tensors); ``torch_compile=True``,
    ``torch_compile_mode`` and a CUDA ``torch_compile_backend`` (``"inductor"``, the default)
    dropped, as XLA810 drops ``torch.compile`` (XLA compiles the whole step as one graph;
    inductor cannot run on XLA); a backend of ``"openxla"`` or one that is no literal is left;
    ``ddp_backend="nccl"`` dropped (on XLA transformers starts the ``xla`` process group
    itself); ``dataloader_pin_memory=True`` dropped (pinned memory speeds CUDA copies only);
    ``tf32=True`` dropped (transformers raises without an Ampere GPU; TPUs multiply float32 in
    bfloat16 by default). Flagged: bitsandbytes optimizers (``optim="adamw_bnb_8bit"``,
    ``"paged_adamw_32bit"``, ...: CUDA kernels; use ``"adamw_torch"``), and ``no_cuda=True`` /
    ``use_cpu=True`` (the run asks for the CPU: drop it to train on the XLA device).

    Under ``--runtime torch-tpu``: transformers 4.57 knows no TorchTPU device, so the
    arguments are flagged, not converted (docs/frameworks.md).
    """

    CODE = "XLA824"
    NAME = "hf-training-arguments"
    SUMMARY = (
        'TrainingArguments: fp16=True -> bf16=True, fused/apex optim -> "adamw_torch"; torch_compile (inductor), '
        'fp16_opt_level, half_precision_backend, ddp_backend="nccl", tf32, pin memory dropped'
    )
    FIX = SAFE
    TRIGGERS = (names_trigger(*TRAINING_ARGUMENTS),)
    REQUIRES = (words("transformers"),)
    BEFORE = (
        "from transformers import TrainingArguments\n\n"
        'args = TrainingArguments(output_dir="out", fp16=True, optim="adamw_torch_fused")\n'
    )
    AFTER = (
        "from transformers import TrainingArguments\n\n"
        'args = TrainingArguments(output_dir="out", bf16=True, optim="adamw_torch")\n'
    )

    DROPPED = {
        "fp16_opt_level": "apex's optimisation level",
        "half_precision_backend": "apex's or CUDA's GradScaler, the float16 backends",
    }
    FUSED = ("adamw_torch_fused", "adamw_apex_fused", "adamw_torch_npu_fused")
    BNB = ("bnb", "8bit", "paged_", "4bit")
    # what makes the Trainer compile (a backend or mode given turns torch_compile on); a backend
    # that is no literal, or "openxla", is the user's choice and left
    COMPILE = ("torch_compile", "torch_compile_backend", "torch_compile_mode", "torchdynamo")
    CUDA_BACKENDS = ("inductor", "cudagraphs", "tensorrt", "onnxrt")

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in TRAINING_ARGUMENTS:
            return updated
        if self.ctx.runtime != "torch-xla":
            self.flag(
                original,
                NO_TORCH_TPU.format(
                    what="transformers' Trainer", package="transformers 4.57", device=self.ctx.api.device
                ),
            )
            return updated
        changes, flags, replacement = [], [], updated
        for keyword, new in (("fp16", "bf16"), ("fp16_full_eval", "bf16_full_eval")):
            arg = call_arg(original, None, keyword)
            if _true(arg):
                if call_arg(original, None, new) is None:
                    replacement = renamed(replacement, keyword, new)
                else:
                    replacement = without(replacement, keyword)
                changes.append(f"`{keyword}=True` -> `{new}=True`")
        for keyword, why in self.DROPPED.items():
            arg = call_arg(original, None, keyword)
            if arg is not None:
                replacement = without(replacement, keyword)
                changes.append(f"`{shown(arg)}` dropped ({why})")
        optim = call_arg(original, None, "optim")
        value = literal(optim.value) if optim is not None else None
        if value in self.FUSED:
            replacement = with_value(replacement, "optim", '"adamw_torch"')
            changes.append(f'`{shown(optim)}` -> `optim="adamw_torch"` (fused CUDA kernels)')
        elif optim is None and not any(a.star for a in original.args):
            # transformers 4.57's default on torch 2.8 and later is "adamw_torch_fused", whose
            # fused kernel refuses XLA tensors at the first step
            replacement = with_value(replacement, "optim", '"adamw_torch"')
            changes.append('`optim="adamw_torch"` added (the default, fused AdamW, refuses XLA tensors)')
        elif isinstance(value, str) and any(mark in value for mark in self.BNB):
            flags.append(
                f'`{shown(optim)}` is a bitsandbytes optimizer (CUDA kernels): use `optim="adamw_torch"` '
                "(bfloat16 keeps the memory low)"
            )
        compiling = [call_arg(original, None, k) for k in self.COMPILE]
        backend = call_arg(original, None, "torch_compile_backend")
        if any(a is not None and code_of(a.value) not in ("False", "None") for a in compiling) and (
            backend is None or literal(backend.value) in self.CUDA_BACKENDS
        ):
            for arg in filter(None, compiling):
                replacement = without(replacement, arg.keyword.value)
            changes.append(
                f"{', '.join(f'`{shown(a)}`' for a in compiling if a is not None)} dropped (XLA compiles the whole "
                "training step as one graph; the Trainer's torch.compile would use inductor, which cannot run on "
                "XLA: XLA810 drops torch.compile the same way)"
            )
        ddp = call_arg(original, None, "ddp_backend")
        if ddp is not None and literal(ddp.value) == "nccl":
            replacement = without(replacement, "ddp_backend")
            changes.append(f"`{shown(ddp)}` dropped (on XLA transformers starts the `xla` process group)")
        for keyword, why in (
            ("dataloader_pin_memory", "pinned memory speeds CUDA copies only"),
            ("tf32", "TF32 is an Ampere GPU's: transformers raises without one; TPUs multiply float32 in bfloat16"),
        ):
            arg = call_arg(original, None, keyword)
            if _true(arg):
                replacement = without(replacement, keyword)
                changes.append(f"`{keyword}=True` dropped ({why})")
        for keyword in ("no_cuda", "use_cpu"):
            arg = call_arg(original, None, keyword)
            if arg is not None and code_of(arg.value) != "False":
                flags.append(
                    f"`{shown(arg)}` asks for the CPU: transformers trains on the XLA device unless it is "
                    "set, so drop it there"
                )
        if flags:
            self.flag(original, f"{'; '.join(flags)}; see {HF_TPU}")
        if not changes:
            return updated
        return self.replace(
            original,
            updated,
            replacement,
            f"{'; '.join(changes)}: transformers trains on the XLA device when torch_xla is installed, in bfloat16 "
            f"without a loss scaler; see {HF_TPU}",
        )


class HfModelLoading(Rule):
    """``from_pretrained`` options that choose CUDA kernels or CUDA placement.

    ``attn_implementation="flash_attention_2"`` (or ``"flash_attention_3"``) loads the
    flash-attn CUDA kernels: -> ``"sdpa"``, PyTorch's scaled_dot_product_attention, which XLA
    compiles (the same attention). Flagged: ``device_map=`` (Accelerate's dispatch of the
    layers over CUDA devices and the CPU: drop it and move the model with
    ``.to(torch_xla.device())``, or let the Trainer place it), and bitsandbytes quantization
    (``load_in_8bit=True``, ``load_in_4bit=True``, ``quantization_config=BitsAndBytesConfig(...)``:
    CUDA kernels; load in bfloat16 with ``torch_dtype=torch.bfloat16``). Calls are matched by
    shape: any ``.from_pretrained(...)`` with these arguments.
    """

    CODE = "XLA825"
    NAME = "hf-model-loading"
    SUMMARY = 'from_pretrained(attn_implementation="flash_attention_2") -> "sdpa"; device_map=, bitsandbytes quantization flagged'
    FIX = SAFE
    TRIGGERS = (
        words(
            "flash_attention_2", "flash_attention_3", "device_map", "load_in_8bit", "load_in_4bit", "BitsAndBytesConfig"
        ),
    )
    REQUIRES = (words("from_pretrained"),)
    BEFORE = 'model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n'
    AFTER = 'model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained"):
            return updated
        device = self.ctx.api.device
        flags = []
        device_map = call_arg(original, None, "device_map")
        if device_map is not None and code_of(device_map.value) != "None":
            flags.append(
                f"`{shown(device_map)}` dispatches the layers over CUDA devices and the CPU (Accelerate): drop it and "
                f"move the model with `.to({device})`, or let the Trainer place it"
            )
        quantized = [
            shown(arg)
            for arg in original.args
            if arg.keyword is not None
            and (
                arg.keyword.value in ("load_in_8bit", "load_in_4bit")
                and code_of(arg.value) != "False"
                or arg.keyword.value == "quantization_config"
                and "BitsAndBytes" in code_of(arg.value)
            )
        ]
        if quantized:
            flags.append(
                f"`{', '.join(quantized)}` quantizes with bitsandbytes' CUDA kernels: load the weights in bfloat16 "
                "(`torch_dtype=torch.bfloat16`) instead"
            )
        if flags:
            self.flag(original, f"{'; '.join(flags)}; see {HF_TPU}")
        attention = call_arg(original, None, "attn_implementation")
        if attention is None or literal(attention.value) not in ("flash_attention_2", "flash_attention_3"):
            return updated
        return self.replace(
            original,
            updated,
            with_value(updated, "attn_implementation", '"sdpa"'),
            f'`{shown(attention)}` -> `attn_implementation="sdpa"`: flash-attn is a CUDA kernel; PyTorch\'s '
            "scaled_dot_product_attention computes the same attention, and XLA compiles it; see " + HF_TPU,
        )


class AccelerateMixedPrecision(Rule):
    """Accelerate's ``Accelerator(mixed_precision="fp16")`` -> ``"bf16"``.

    On XLA devices Accelerate (1.15) trains in bfloat16 with ``mixed_precision="bf16"``
    (it sets torch_xla's bfloat16 conversion), with no loss scaler; ``"fp16"`` builds a CUDA
    GradScaler (Accelerate's TPU guide; the migration guide's "Automatic Mixed Precision").
    Accelerate's config files (``accelerate config``: ``distributed_type: MULTI_GPU``,
    ``mixed_precision: fp16``) are YAML, not Python: the rewriter does not read them
    (docs/frameworks.md says what to change). Under ``--runtime torch-tpu``: accelerate 1.15
    knows no TorchTPU device, so the Accelerator is flagged, not converted.
    """

    CODE = "XLA826"
    NAME = "accelerate-mixed-precision"
    SUMMARY = 'Accelerator(mixed_precision="fp16") -> "bf16" (no loss scaler on XLA)'
    FIX = SAFE
    TRIGGERS = (names_trigger(*ACCELERATORS),)
    REQUIRES = (words("accelerate"),)
    BEFORE = 'from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision="fp16")\n'
    AFTER = 'from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision="bf16")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in ACCELERATORS:
            return updated
        if self.ctx.runtime != "torch-xla":
            cpu = call_arg(original, None, "cpu")
            if not _true(cpu):
                self.flag(
                    original,
                    NO_TORCH_TPU.format(what="Accelerate", package="accelerate 1.15", device=self.ctx.api.device),
                )
            return updated
        arg = call_arg(original, None, "mixed_precision")
        if arg is None or literal(arg.value) != "fp16":
            return updated
        return self.replace(
            original,
            updated,
            with_value(updated, "mixed_precision", '"bf16"'),
            f'`{snippet(original)}`: `mixed_precision="fp16"` -> `"bf16"`: on XLA devices Accelerate computes in '
            f"bfloat16, which needs no loss scaler (fp16 builds a CUDA GradScaler); see {ACCELERATE_TPU}",
        )
