"""XLA820-XLA822: Lightning's ``Trainer`` and ``Fabric`` given the accelerator, precision and
strategy of Lightning's XLA path (Lightning's "TPU" documents; lightning 2.6's
``XLAAccelerator``, ``XLAPrecision`` and ``XLAStrategy`` are what they must fit)."""

from __future__ import annotations

import libcst as cst

from codemods.frameworks.common import (
    FABRICS,
    LIGHTNING_PRECISION,
    LIGHTNING_TPU,
    LIGHTNING_TRAINERS,
    MAT_MUL_PRECISION,
    lightning_class,
    literal,
    renamed,
    shown,
    what,
    with_value,
    without,
)
from migrate_xla.rule.api import SAFE, TORCH, Rule, call_arg, code_of, names_trigger, parse_expr, snippet, words

CALLS = LIGHTNING_TRAINERS | FABRICS
TRIGGERS = (names_trigger(*CALLS),)
REQUIRES = (words("lightning", "pytorch_lightning", "lightning_fabric"),)
GPU_ACCELERATORS = ("gpu", "cuda")
# accelerators that are not a GPU's: the call is left as it is
OTHER_ACCELERATORS = ("cpu", "mps", "hpu", "ipu", "tpu")


def accelerator_of(rule: Rule, call: cst.Call) -> str | None:
    """What ``call``'s accelerator is: "gpu" (a GPU: "gpu", "cuda", ``CUDAAccelerator()``,
    ``gpus=``), "auto" (absent or "auto": a GPU on a GPU machine, XLA on a TPU VM), "other"
    (the CPU, MPS, an accelerator already XLA's), or None (a value the code computes)."""
    arg = call_arg(call, None, "accelerator")
    if arg is None:
        return "gpu" if call_arg(call, None, "gpus") is not None else "auto"
    value = literal(arg.value)
    if value in GPU_ACCELERATORS:
        return "gpu"
    if value == "auto":
        return "auto"
    if isinstance(value, str) or value is not None:
        return "other"
    if isinstance(arg.value, cst.Call):
        if lightning_class(rule.qualname(arg.value.func), "CUDAAccelerator"):
            return "gpu"
        return "other"
    return None


class LightningAccelerator(Rule):
    """Lightning's ``Trainer(accelerator="gpu")`` / ``Fabric(accelerator="cuda")`` train on
    XLA devices with ``accelerator="tpu"``.

    Lightning's XLA accelerator (``XLAAccelerator``, named "tpu": Lightning's "TPU" guide)
    places the model and each batch on the XLA device and steps the optimizer with
    ``xm.optimizer_step`` (one graph a step); left "gpu", the run stops with
    "MisconfigurationException: No supported gpu backend found!". Converted:
    ``accelerator="gpu"`` / ``"cuda"`` and ``CUDAAccelerator()`` -> ``"tpu"``; Lightning
    1.x's ``gpus=N`` -> ``accelerator="tpu", devices=N`` (``gpus=-1``: ``devices="auto"``),
    ``auto_select_gpus`` dropped; ``devices=-1`` -> ``"auto"``. Flagged: ``devices=`` that
    Lightning refuses on XLA (it takes 1, ``"auto"``, the host's device count or one
    ``[i]``: several GPUs by count or list become "all of the host's devices", and the
    global batch grows with them). ``accelerator="auto"`` or none is left: Lightning's
    "auto" tries XLA first, so on a TPU VM it trains there (``xla-migrate verify`` lets
    Lightning count CPU PJRT's device as its "tpu" device, as on a TPU VM: docs/verify.md).
    An accelerator the code computes is noted (pass "tpu" where it comes from).

    Under ``--runtime torch-tpu``: lightning 2.6 has no accelerator for TorchTPU's ``tpu``
    device (its "tpu" is PyTorch/XLA's, and "auto" falls back to the CPU without torch_xla),
    so the call is flagged: migrate the script with ``--runtime torch-xla``, or train
    without the Trainer on ``torch.device("tpu")``.
    """

    CODE = "XLA820"
    NAME = "lightning-accelerator"
    SUMMARY = 'Lightning Trainer/Fabric accelerator="gpu"|"cuda", CUDAAccelerator(), gpus=N -> accelerator="tpu"'
    FIX = SAFE
    TRIGGERS = TRIGGERS
    REQUIRES = REQUIRES
    BEFORE = 'import lightning as L\n\ntrainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=3)\n'
    AFTER = 'import lightning as L\n\ntrainer = L.Trainer(accelerator="tpu", devices=1, max_epochs=3)\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name not in CALLS:
            return updated
        kind = accelerator_of(self, original)
        if self.ctx.runtime != "torch-xla":
            if kind in ("gpu", "auto"):
                self.flag(
                    original,
                    f"Lightning's {what(original, name)} has no accelerator for TorchTPU's `tpu` device (lightning 2.6: "
                    'its "tpu" accelerator is PyTorch/XLA\'s, and "auto" trains on the CPU without torch_xla): migrate '
                    "this script with `--runtime torch-xla`, or train without the "
                    f"{what(original, name)} on `{self.ctx.api.device}`; see docs/frameworks.md",
                )
            return updated
        if kind is None:
            arg = call_arg(original, None, "accelerator")
            self.note(
                original,
                f'`{shown(arg)}` is computed: Lightning trains on XLA devices with `accelerator="tpu"` (or '
                f'"auto" on a TPU VM): pass that where the value comes from; see {LIGHTNING_TPU}',
            )
            return updated
        if kind == "other":
            return updated
        changes, replacement = [], updated
        if kind == "gpu":
            arg = call_arg(original, None, "accelerator")
            gpus = call_arg(original, None, "gpus")
            if arg is not None:
                changes.append(f'`{shown(arg)}` -> `accelerator="tpu"`')
                replacement = with_value(replacement, "accelerator", '"tpu"')
            if gpus is not None:
                count = literal(gpus.value)
                devices = '"auto"' if count in (-1, "-1") else code_of(gpus.value)
                if call_arg(original, None, "devices") is None:
                    replacement = renamed(replacement, "gpus", "devices", devices)
                else:
                    replacement = without(replacement, "gpus")
                if arg is None:
                    replacement = with_value(replacement, "accelerator", '"tpu"')
                changes.append(f'`{shown(gpus)}` -> `accelerator="tpu", devices={devices}`')
            if call_arg(original, None, "auto_select_gpus") is not None:
                replacement = without(replacement, "auto_select_gpus")
                changes.append("`auto_select_gpus` dropped")
        devices = call_arg(original, None, "devices")
        count = literal(devices.value) if devices is not None else None
        if count in (-1, "-1"):
            replacement = with_value(replacement, "devices", '"auto"')
            changes.append(f'`{shown(devices)}` -> `devices="auto"` (all of the host\'s XLA devices)')
        elif devices is not None and _refused(devices.value, count):
            self.flag(
                original,
                f'`{shown(devices)}`: Lightning on XLA devices takes `devices=1`, `"auto"` (all of the host\'s), '
                'their count or one `[i]`, and refuses other counts: use 1 or "auto" (the global batch is then '
                f"the batch size times the devices used); see {LIGHTNING_TPU}",
            )
        if not changes:
            return updated
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}`: {'; '.join(changes)}: Lightning's XLA accelerator places the model and the "
            "batches on the XLA device and cuts each step into a graph; see " + LIGHTNING_TPU,
            drop_if_unused=self._cuda_accelerator_imports(original),
        )

    def _cuda_accelerator_imports(self, call: cst.Call):
        arg = call_arg(call, None, "accelerator")
        if arg is not None and isinstance(arg.value, cst.Call):
            return self.ctx.import_behind(arg.value.func)
        return []


def _refused(node: cst.BaseExpression, count) -> bool:
    """Whether ``devices=`` names several devices by count or list (Lightning on XLA takes 1,
    "auto", all of the host's or one index): a literal count above 1 or a list of several."""
    if isinstance(count, int):
        return count > 1
    if isinstance(count, str):
        parts = [p for p in count.split(",") if p.strip()]
        return len(parts) > 1 or (
            len(parts) == 1 and "," not in count and parts[0].strip().isdigit() and int(parts[0]) > 1
        )
    if isinstance(node, (cst.List, cst.Tuple)):
        return len(node.elements) > 1
    return False


class LightningPrecision(Rule):
    """Lightning's float16 precisions become those its XLA precision plugin takes.

    Lightning's ``XLAPrecision`` (lightning 2.6) takes ``"32-true"``, ``"16-true"`` and
    ``"bf16-true"`` only: any other (``16``, ``"16-mixed"``, ``"bf16-mixed"``, ``"bf16"``,
    ``"64-true"``) raises "ValueError: `precision=...` is not supported in XLA" when the
    Trainer starts. Mixed precision (``16``, ``"16"``, ``"16-mixed"``, ``"bf16"``,
    ``"bf16-mixed"``) -> ``"32-true"``: the weights, the optimizer and the loss stay float32,
    and a TPU multiplies float32 matrices in bfloat16 by default
    (``torch_xla.backends.set_mat_mul_precision("default")``: the PyTorch/XLA precision
    tutorial), which is what mixed precision buys on a GPU, with no loss scaler (the
    migration guide's "Automatic Mixed Precision"). ``"16-true"`` -> ``"bf16-true"``: the
    weights in a half type, bfloat16 being the TPU's (Lightning sets ``XLA_USE_BF16``, which
    torch_xla 2.6 and later warn is deprecated). Flagged: ``64``/``"64-true"`` (no float64 on
    TPUs) and Transformer Engine's precisions (NVIDIA's FP8 kernels). A precision the code
    computes is noted. Left: a Trainer whose accelerator is the CPU (or another that is not
    a GPU's) or already XLA's.
    """

    CODE = "XLA821"
    NAME = "lightning-precision"
    SUMMARY = 'Lightning precision=16|"16-mixed"|"bf16-mixed" -> "32-true" (TPU matmuls run in bfloat16), "16-true" -> "bf16-true"'
    FIX = SAFE
    TRIGGERS = TRIGGERS
    REQUIRES = REQUIRES
    RUNTIMES = ("torch-xla",)
    BEFORE = 'import lightning as L\n\ntrainer = L.Trainer(accelerator="tpu", precision="16-mixed")\n'
    AFTER = 'import lightning as L\n\ntrainer = L.Trainer(accelerator="tpu", precision="32-true")\n'

    MIXED = (16, "16", "16-mixed", "bf16", "bf16-mixed")
    HALF = ("16-true",)
    REFUSED = (64, "64", "64-true", "transformer-engine", "transformer-engine-float16")

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name not in CALLS:
            return updated
        arg = call_arg(original, None, "precision")
        if arg is None or accelerator_of(self, original) == "other" and _accelerator(original) != "tpu":
            return updated
        value = literal(arg.value)
        if value in self.MIXED:
            return self.replace(
                original,
                updated,
                with_value(updated, "precision", '"32-true"'),
                f'`{shown(arg)}` -> `precision="32-true"`: Lightning\'s XLA precision plugin has no mixed precision '
                '(it takes "32-true", "16-true" or "bf16-true"; others raise ValueError); float32 weights and loss, '
                "and a TPU multiplies float32 matrices in bfloat16 by default (no loss scaler needed); "
                f'"bf16-true" halves the memory with bfloat16 weights; see {MAT_MUL_PRECISION}',
            )
        if value in self.HALF:
            return self.replace(
                original,
                updated,
                with_value(updated, "precision", '"bf16-true"'),
                f'`{shown(arg)}` -> `precision="bf16-true"`: weights in bfloat16, the TPU\'s half type (Lightning '
                f"sets XLA_USE_BF16, which torch_xla says is deprecated); see {LIGHTNING_PRECISION}",
            )
        if value in self.REFUSED:
            self.flag(
                original,
                f'`{shown(arg)}` has no TPU form: Lightning on XLA takes "32-true", "16-true" or "bf16-true" '
                f"(TPUs compute neither float64 nor FP8): choose one of them; see {LIGHTNING_PRECISION}",
            )
        elif value is None:
            self.note(
                original,
                f'`{shown(arg)}` is computed: on XLA Lightning takes "32-true", "16-true" or "bf16-true" only '
                f'(mixed precisions raise ValueError): pass "32-true" (a TPU multiplies float32 matrices in '
                f'bfloat16 by default) or "bf16-true"; see {LIGHTNING_PRECISION}',
            )
        return updated


def _accelerator(call: cst.Call) -> str | int | None:
    arg = call_arg(call, None, "accelerator")
    return literal(arg.value) if arg is not None else None


class LightningStrategy(Rule):
    """Lightning's GPU strategies and GPU-only switches become its XLA ones, or are flagged.

    On XLA devices Lightning runs ``XLAStrategy`` (one process a device, gradients
    all-reduced by XLA) or ``SingleDeviceXLAStrategy``, and refuses the others ("The
    `XLAAccelerator` can only be used with a `SingleDeviceXLAStrategy` or `XLAStrategy`").
    Converted: ``strategy="ddp"`` (and its spawn, fork, notebook and find-unused forms),
    ``"dp"`` and ``DDPStrategy(...)`` dropped: with no strategy Lightning picks ``XLAStrategy``
    for several devices and the single-device one for one (``find_unused_parameters``,
    ``static_graph``, ``process_group_backend="nccl"`` have no XLA meaning); ``"fsdp"`` ->
    ``"xla_fsdp"`` (``XLAFSDPStrategy``, PyTorch/XLA's FSDP); ``benchmark=`` dropped (cuDNN's
    autotuner: XLA compiles its own kernels). Flagged: ``FSDPStrategy(...)`` (its wrapping
    policy and options are PyTorch's: ``XLAFSDPStrategy(auto_wrap_policy=...)`` takes
    PyTorch/XLA's), DeepSpeed (CUDA-only), and ``sync_batchnorm=True`` (Lightning wraps
    BatchNorm in ``torch.nn.SyncBatchNorm``, which takes CUDA, XPU and PrivateUse1 tensors
    only: drop it and let each device normalise its own batch, or all-reduce the statistics
    with ``xm.all_reduce``). Left: a Trainer whose accelerator is the CPU (or another that is
    not a GPU's).
    """

    CODE = "XLA822"
    NAME = "lightning-strategy"
    SUMMARY = 'Lightning strategy="ddp"/DDPStrategy() dropped (XLAStrategy), "fsdp" -> "xla_fsdp", benchmark= dropped; FSDPStrategy, DeepSpeed, sync_batchnorm flagged'
    FIX = SAFE
    TRIGGERS = TRIGGERS
    REQUIRES = REQUIRES
    RUNTIMES = ("torch-xla",)
    BEFORE = (
        'import lightning as L\n\ntrainer = L.Trainer(accelerator="tpu", devices=8, strategy="ddp", benchmark=True)\n'
    )
    AFTER = 'import lightning as L\n\ntrainer = L.Trainer(accelerator="tpu", devices=8)\n'

    DDP = frozenset(
        f"ddp{spawn}{unused}"
        for spawn in ("", "_spawn", "_fork", "_notebook")
        for unused in ("", "_find_unused_parameters_true", "_find_unused_parameters_false")
    ) | {"dp"}

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name not in CALLS:
            return updated
        if accelerator_of(self, original) == "other" and _accelerator(original) != "tpu":
            return updated
        changes, flags, drops, replacement = [], [], [], updated
        strategy = call_arg(original, None, "strategy")
        if strategy is not None:
            value = literal(strategy.value)
            strategy_class = self.qualname(strategy.value.func) if isinstance(strategy.value, cst.Call) else None
            if value in self.DDP or lightning_class(strategy_class, "DDPStrategy", "DataParallelStrategy"):
                replacement = without(replacement, "strategy")
                changes.append(
                    f"`strategy={snippet(strategy.value)}` dropped (Lightning picks XLAStrategy for several devices, "
                    "SingleDeviceXLAStrategy for one, and refuses GPU strategies)"
                )
                if isinstance(strategy.value, cst.Call):
                    drops += self.ctx.import_behind(strategy.value.func)
            elif value == "fsdp":
                replacement = with_value(replacement, "strategy", '"xla_fsdp"')
                changes.append(f'`{shown(strategy)}` -> `strategy="xla_fsdp"` (PyTorch/XLA\'s FSDP)')
            elif lightning_class(strategy_class, "FSDPStrategy") or (
                isinstance(value, str) and value.startswith("fsdp")
            ):
                flags.append(
                    f"`strategy={snippet(strategy.value)}` is PyTorch's FSDP: on XLA use `XLAFSDPStrategy(auto_wrap_policy=...)` "
                    '(or `strategy="xla_fsdp"`), whose wrapping policy and options are PyTorch/XLA\'s'
                )
            elif lightning_class(strategy_class, "DeepSpeedStrategy") or (
                isinstance(value, str) and value.startswith("deepspeed")
            ):
                flags.append(
                    f'`{snippet(strategy)}` is DeepSpeed, CUDA-only: shard with `strategy="xla_fsdp"` '
                    "(`XLAFSDPStrategy`) or train with the default XLAStrategy"
                )
        benchmark = call_arg(original, None, "benchmark")
        if benchmark is not None:
            replacement = without(replacement, "benchmark")
            changes.append(f"`{shown(benchmark)}` dropped (cuDNN's autotuner: XLA compiles its own kernels)")
        sync = call_arg(original, None, "sync_batchnorm")
        if sync is not None and code_of(sync.value) != "False":
            flags.append(
                f"`{shown(sync)}` wraps BatchNorm layers in torch.nn.SyncBatchNorm, which takes CUDA, XPU and "
                "PrivateUse1 tensors only and raises on XLA devices once several train: drop it (each device "
                "normalises its own batch), or all-reduce the statistics with `xm.all_reduce`"
            )
        if flags:
            self.flag(original, f"{'; '.join(flags)}; see {LIGHTNING_TPU}")
        if not changes:
            return updated
        return self.replace(
            original,
            updated,
            replacement,
            f"{'; '.join(changes)}; see {LIGHTNING_TPU}",
            drop_if_unused=drops,
        )


SWAP_SWITCH = "torch.__future__.set_swap_module_params_on_conversion(True)"


class FabricSetupParams(Rule):
    """``fabric.setup(model, optimizer)`` on one XLA device keeps the optimizer on the model's
    parameters: the module swaps its parameters on conversion.

    Fabric moves the model in ``setup``. On CUDA the move changes each parameter in place,
    so an optimizer built before it (``optimizer = Adam(model.parameters())``, then
    ``fabric.setup(model, optimizer)``: Fabric's own examples) updates the moved weights. A
    move to an XLA device puts new ``Parameter`` objects in the module (XLA109), and
    lightning 2.6 points the optimizer at them only under ``XLAStrategy`` (several devices):
    with one device (``SingleDeviceXLAStrategy``, ``devices=1``) the optimizer keeps the CPU
    tensors and the model never learns (verify: "stale-optimizer"). The fix switches on
    ``torch.__future__.set_swap_module_params_on_conversion(True)`` right before the first
    ``setup`` of a Fabric the file builds with a GPU or "tpu" accelerator, so the move keeps
    the ``Parameter`` objects, whatever the number of devices (XLA109's docstring says what
    the switch changes besides). Lightning's guide "TPU training with Fabric" gives the other
    way: build the optimizer after ``fabric.setup_module(model)``.
    """

    CODE = "XLA823"
    NAME = "fabric-setup-params"
    SUMMARY = (
        "fabric.setup(model, optimizer) on an XLA device: parameters swapped on conversion, so the optimizer keeps them"
    )
    FIX = SAFE
    SEVERITY = "error"
    TRIGGERS = (names_trigger(*FABRICS),)
    REQUIRES = (words("lightning", "lightning_fabric"), words("setup"))
    RUNTIMES = ("torch-xla",)
    WHOLE_MODULE = True
    BEFORE = (
        "import torch\n"
        "from lightning.fabric import Fabric\n\n"
        'fabric = Fabric(accelerator="tpu")\n'
        "optimizer = torch.optim.Adam(model.parameters())\n"
        "model, optimizer = fabric.setup(model, optimizer)\n"
    )
    AFTER = (
        "import torch\n"
        "from lightning.fabric import Fabric\n\n"
        'fabric = Fabric(accelerator="tpu")\n'
        "optimizer = torch.optim.Adam(model.parameters())\n"
        f"{SWAP_SWITCH}\n"
        "model, optimizer = fabric.setup(model, optimizer)\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.fabrics: set[str] = set()  # names bound to a Fabric on a GPU or XLA accelerator
        self.switched = False  # the file sets the switch itself, or a fix did
        self.setup_at: cst.Call | None = None  # the setup call of the statement being visited

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and self.qualname(value.func) in FABRICS:
            kind = accelerator_of(self, value)
            if kind in ("gpu", "auto") or _accelerator(value) == "tpu":
                for target in node.targets:
                    if isinstance(target.target, (cst.Name, cst.Attribute)):
                        self.fabrics.add(code_of(target.target))

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname(node.func) == "torch.__future__.set_swap_module_params_on_conversion":
            self.switched = True
            return
        func = node.func
        if (
            not self.switched
            and self.setup_at is None
            and isinstance(func, cst.Attribute)
            and func.attr.value == "setup"
            and code_of(func.value) in self.fabrics
            and len([a for a in node.args if a.keyword is None]) >= 2
        ):
            self.setup_at = node

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call, self.setup_at = self.setup_at, None
        if call is None or self.switched:
            return updated
        self.switched = True
        switch = cst.SimpleStatementLine(body=[cst.Expr(parse_expr(SWAP_SWITCH))], leading_lines=updated.leading_lines)
        return self.replace(
            original,
            updated,
            cst.FlattenSentinel([switch, updated.with_changes(leading_lines=[])]),
            f"`{snippet(call)}`: `{SWAP_SWITCH}` added before it: on one XLA device Fabric moves the model without "
            "pointing the optimizer at the moved parameters (lightning 2.6 does it under XLAStrategy only), so an "
            "optimizer built before setup would update CPU copies; with the switch the move keeps the Parameter "
            f"objects; see {LIGHTNING_TPU}",
            imports=[TORCH],
        )
