"""XLA811: CUDA-bound helpers of installed libraries: timm's prefetching loader gets the
XLA device, the others are flagged by name with what to use instead (the migration
guide's "Unsupported Operations" and "Automatic Mixed Precision")."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.common import GUIDE, TPU_AMP_GUIDE, TPU_GUIDE, CudaOnlyApi
from migrate_xla.rule.api import EQUAL, SAFE, call_arg, code_of, snippet, words

AMP_GUIDE = "https://docs.pytorch.org/xla/master/perf/amp.html"
SDPA = "`torch.nn.functional.scaled_dot_product_attention`"

# timm's loaders, which copy each batch to `device` (default: CUDA; a CUDA stream when it is one)
TIMM_LOADERS = {
    "timm.data.create_loader": "create_loader",
    "timm.data.loader.create_loader": "create_loader",
    "timm.data.PrefetchLoader": "PrefetchLoader",
    "timm.data.loader.PrefetchLoader": "PrefetchLoader",
}


class LibraryCudaHelper(CudaOnlyApi):
    """CUDA-bound helpers of installed libraries: converted where the library has an XLA-safe
    option, flagged by name with what to do otherwise.

    The rewriter changes the user's files, not the libraries they import, so a helper that
    reaches for CUDA inside a library is only seen at its call. Converted (guide,
    "Unsupported Operations"): timm's ``create_loader(...)`` (``use_prefetcher=True`` by
    default) and ``PrefetchLoader(loader)`` copy each batch to ``device``, whose default is
    ``torch.device('cuda')``, on a CUDA stream; without ``device=`` they get
    ``device=torch_xla.device()``: timm 0.9 and later then copy without streams. An older
    timm has no ``device`` argument (its PrefetchLoader calls ``.cuda()``): the call then
    fails at once with a TypeError, and the message says what to do there (``use_prefetcher
    =False``, and the batches moved to the device in the loop, as timm's train.py does
    without its prefetcher).
    Flagged, with the counterpart each message names: timm's ``ApexScaler`` (``apex.amp``:
    no loss scaler under bfloat16); and the CUDA kernel libraries ``bitsandbytes`` (8-bit
    optimizers), ``xformers`` and ``flash_attn`` (attention kernels) and ``deepspeed``. Apex
    itself is XLA807's; the training frameworks' arguments (Lightning, Hugging Face,
    Accelerate) are the frameworks family's (XLA82x).

    Under ``--runtime torch-tpu`` the loader gets ``device=torch.device("tpu")`` (the run's
    device), and the messages name TorchTPU's counterparts: ``torch.autocast('tpu',
    dtype=torch.bfloat16)``, the ``"bf16"`` options, PyTorch's own FSDP; Lightning's
    ``accelerator="tpu"`` runs on PyTorch/XLA, not TorchTPU, so the message says so.
    """

    CODE = "XLA811"
    NAME = "library-cuda-helper"
    SUMMARY = (
        "CUDA-bound library helpers: timm's prefetching loader gets the XLA device; ApexScaler, "
        "bitsandbytes, xformers, flash_attn and deepspeed are flagged with what to use"
    )
    FIX = SAFE
    TRIGGERS = (
        words(
            "create_loader",
            "PrefetchLoader",
            "ApexScaler",
            "bitsandbytes",
            "xformers",
            "flash_attn",
            "deepspeed",
        ),
    )
    APIS = {
        "timm.utils.ApexScaler": "is timm's apex loss scaler: `apex.amp` does not exist on XLA, and bfloat16 "
        "needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('xla', "
        f"dtype=torch.bfloat16)`); XLA407 converts its calls; see {AMP_GUIDE}",
        "timm.utils.cuda.ApexScaler": "is timm's apex loss scaler: `apex.amp` does not exist on XLA, and "
        "bfloat16 needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('xla', "
        f"dtype=torch.bfloat16)`); XLA407 converts its calls; see {AMP_GUIDE}",
        "bitsandbytes.": "is bitsandbytes, whose 8-bit optimizers and quantized layers are CUDA kernels: use "
        f"`torch.optim.AdamW` / `torch.nn.Linear` (bfloat16 keeps the memory low); see {GUIDE}",
        "xformers.": f"is xformers, whose attention kernels are CUDA-only: use {SDPA}, which XLA compiles; see {GUIDE}",
        "flash_attn.": f"is flash-attention, a CUDA kernel: use {SDPA} (or, on TPU, "
        "`torch_xla.experimental.custom_kernel.flash_attention`); see https://docs.pytorch.org/xla/master/"
        "features/pallas.html",
        "deepspeed.": "is DeepSpeed, whose engine and fused kernels are CUDA-only: shard with PyTorch/XLA's FSDP "
        "(`torch_xla.distributed.fsdp.XlaFullyShardedDataParallel`) or SPMD (`xla-migrate --target spmd`); "
        "see https://docs.pytorch.org/xla/master/perf/fsdp.html",
    }
    RUNTIME_APIS = {
        "torch-tpu": {
            "timm.utils.ApexScaler": "is timm's apex loss scaler: `apex.amp` does not exist on TPU, and bfloat16 "
            "needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('tpu', "
            f"dtype=torch.bfloat16)`); XLA407 converts its calls; see {TPU_AMP_GUIDE}",
            "timm.utils.cuda.ApexScaler": "is timm's apex loss scaler: `apex.amp` does not exist on TPU, and "
            "bfloat16 needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('tpu', "
            f"dtype=torch.bfloat16)`); XLA407 converts its calls; see {TPU_AMP_GUIDE}",
            "bitsandbytes.": "is bitsandbytes, whose 8-bit optimizers and quantized layers are CUDA kernels: use "
            f"`torch.optim.AdamW` / `torch.nn.Linear` (bfloat16 keeps the memory low); see {TPU_GUIDE}",
            "xformers.": f"is xformers, whose attention kernels are CUDA-only: use {SDPA}; see {TPU_GUIDE}",
            "flash_attn.": f"is flash-attention, a CUDA kernel: use {SDPA} (or TorchTPU's "
            f"`torch.tpu.ops.splash_sdpa`); see {TPU_GUIDE}",
            "deepspeed.": "is DeepSpeed, whose engine and fused kernels are CUDA-only: shard with PyTorch's FSDP "
            f"(`torch.distributed.fsdp.fully_shard`); see {TPU_GUIDE}",
        }
    }
    BEFORE = (
        "from timm.data import create_loader\n"
        "loader = create_loader(dataset, input_size=(3, 224, 224), batch_size=64, use_prefetcher=True)\n"
    )
    AFTER = (
        "from timm.data import create_loader\n"
        "loader = create_loader(dataset, input_size=(3, 224, 224), batch_size=64, use_prefetcher=True, "
        "device=torch_xla.device())\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in TIMM_LOADERS:
            return self._loader_device(original, updated, TIMM_LOADERS[name])
        return updated

    def _loader_device(self, original: cst.Call, updated: cst.Call, what: str):
        if any(arg.star for arg in original.args) or call_arg(original, None, "device") is not None:
            return updated
        prefetch = call_arg(original, None, "use_prefetcher")
        if what == "create_loader" and prefetch is not None and code_of(prefetch.value) == "False":
            return updated  # no prefetcher: the batches stay on the host
        api = self.ctx.api
        device = cst.Arg(cst.parse_expression(api.device), keyword=cst.Name("device"), equal=EQUAL)
        args = list(updated.args)
        if args and isinstance(args[-1].comma, cst.Comma):  # a trailing comma: the new argument takes it
            device = device.with_changes(comma=args[-1].comma)
            between = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            args[-1] = args[-1].with_changes(comma=between)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=[*args, device]),
            f"`{snippet(original)}`: `device={api.device}` added: timm's {what} copies each batch to "
            f"`device`, CUDA unless it is given (on a CUDA stream); on the {api.device_type.upper()} device it "
            "copies without streams (timm 0.9 and later take `device`; with an older timm, which has no `device` "
            "and calls `.cuda()`, pass `use_prefetcher=False` and move the batches to the device in the loop "
            f"instead); see {GUIDE if api.lazy else TPU_GUIDE}",
            imports=list(api.imports),
        )
