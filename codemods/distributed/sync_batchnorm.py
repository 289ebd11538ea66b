"""XLA613: ``nn.SyncBatchNorm``, whose forward refuses XLA tensors, marked; its conversion of a
model dropped by an unsafe fix (each device normalises its own batch)."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from migrate_xla.rule.api import UNSAFE, Rule, snippet, words

CONVERT = frozenset(
    {
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
        "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
    }
)
CONSTRUCT = frozenset({"torch.nn.SyncBatchNorm", "torch.nn.modules.batchnorm.SyncBatchNorm"})
FAILS = (
    "torch.nn.SyncBatchNorm takes CUDA, XPU and PrivateUse1 tensors only: on the XLA device its forward raises "
    'once the process group is up ("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"), '
    "and torch_xla has no synchronised batch norm"
)
PER_DEVICE = (
    "the model's BatchNorm layers then normalise each device's own batch: the same as SyncBatchNorm on one "
    "device, statistics of a per-device batch on several (make the per-device batch large enough, or all-reduce "
    f"the statistics with `xm.all_reduce` in a BatchNorm of your own; {DDP_GUIDE})"
)


class SyncBatchNormOnXla(Rule):
    """``nn.SyncBatchNorm.convert_sync_batchnorm(model)`` goes (unsafe fix, held back and marked),
    ``nn.SyncBatchNorm(...)`` is flagged: SyncBatchNorm cannot run on XLA devices.

    torch 2.9's ``SyncBatchNorm.forward`` refuses any input that is not on a CUDA, XPU or
    PrivateUse1 device as soon as a process group is initialised, which the migrated
    data-parallel script always has: the self-supervised trainers (SimSiam, Barlow Twins) and
    ImageNet-style launchers that convert their models for DDP died at their first forward
    (docs/realworld.md). torch_xla offers no synchronised batch norm, so every fix changes
    what is computed across devices: the fix keeps the model's own BatchNorm layers
    (``model = nn.SyncBatchNorm.convert_sync_batchnorm(model)`` goes; ``net =
    convert_sync_batchnorm(model)`` becomes ``net = model``), which is exactly SyncBatchNorm on
    one device and per-device statistics on several. Held back, the line is marked, and a run
    that crashes there names this rule and ``--unsafe-fixes``. A ``SyncBatchNorm(...)`` built
    directly is flagged (its BatchNorm class depends on the input's rank). PyTorch/XLA only:
    TorchTPU's ``tpu`` device is PyTorch's PrivateUse1, which SyncBatchNorm takes.
    """

    CODE = "XLA613"
    NAME = "sync-batchnorm"
    SUMMARY = (
        "nn.SyncBatchNorm cannot run on XLA devices: convert_sync_batchnorm(model) dropped (unsafe: per-device "
        "statistics), SyncBatchNorm(...) flagged"
    )
    FIX = UNSAFE
    MARK_HELD_BACK = True  # held back, the run raises at the first SyncBatchNorm forward
    SEVERITY = "error"
    TRIGGERS = (words("SyncBatchNorm"),)
    RUNTIMES = ("torch-xla",)
    BEFORE = "import torch.nn as nn\n\nmodel = nn.SyncBatchNorm.convert_sync_batchnorm(model)\nmodel = DDP(model)\n"
    AFTER = "import torch.nn as nn\n\nmodel = DDP(model)\n"

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """``model = nn.SyncBatchNorm.convert_sync_batchnorm(model)``: the statement goes."""
        if not self._reassigns(original):
            return updated
        call = original.value
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original, updated, cst.RemoveFromParent(), f"`{snippet(call)}`: {FAILS}; the fix drops it: {PER_DEVICE}"
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in CONSTRUCT:
            self.flag(original, f"`{snippet(original)}`: {FAILS}: use the BatchNorm of the input's rank; {PER_DEVICE}")
        elif self._converts(original) and not self._whole_statement(original):
            return self.replace(
                original,
                updated,
                updated.args[0].value,
                f"`{snippet(original)}`: {FAILS}; the fix keeps the model as it is: {PER_DEVICE}",
            )
        return updated

    def _converts(self, call: cst.BaseExpression) -> bool:
        """A ``convert_sync_batchnorm(model)`` call this rule can drop (the model given first, by position)."""
        return (
            isinstance(call, cst.Call)
            and self.qualname(call.func) in CONVERT
            and bool(call.args)
            and call.args[0].keyword is None
            and not call.args[0].star
        )

    def _whole_statement(self, call: cst.Call) -> bool:
        """Whether ``call`` is the value of a ``model = convert(model)`` statement (leave_Assign's)."""
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        assign = statement.body[0]
        return isinstance(assign, cst.Assign) and assign.value is call and self._reassigns(assign)

    def _reassigns(self, assign: cst.Assign) -> bool:
        """``model = nn.SyncBatchNorm.convert_sync_batchnorm(model)``: the model converted in place."""
        call = assign.value
        if not self._converts(call) or len(assign.targets) != 1:
            return False
        target, argument = assign.targets[0].target, call.args[0].value
        return isinstance(target, cst.Name) and isinstance(argument, cst.Name) and target.value == argument.value
