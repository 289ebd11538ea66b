"""XLA904: ``torch.inference_mode()``, under which torch_xla 2.9 cannot run a linear layer or an
LSTM, becomes ``torch.no_grad()`` (safe fix)."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC
from migrate_xla.rule.api import SAFE, TORCH, Import, Rule, parse_expr, snippet, words

# what the file imports of it, dropped once no call is left
IMPORTED = (Import("torch", "inference_mode"), Import("torch.autograd.grad_mode", "inference_mode"))
INFERENCE_MODE = frozenset({"torch.inference_mode", "torch.autograd.grad_mode.inference_mode"})
FAILS = (
    "under torch.inference_mode() torch_xla 2.9 cannot run nn.Linear or nn.LSTM on the device "
    '("Cannot set version_counter for inference tensor"; measured on CPU PJRT, '
    f"{DEFECTS_DOC})"
)


class InferenceMode(Rule):
    """``torch.inference_mode()`` becomes ``torch.no_grad()``: torch_xla cannot run some layers under it.

    Measured on torch_xla 2.9.0, CPU PJRT: an ``nn.Linear`` or ``nn.LSTM`` on the XLA device
    called under ``torch.inference_mode()`` raises ``RuntimeError: Cannot set
    version_counter for inference tensor`` (convolutions and activations run); under
    ``torch.no_grad()`` all of them run. Evaluation loops written for the GPU use
    ``inference_mode`` more and more (it is a little faster there): the migrated script dies
    at its first evaluation, after training steps that were right.

    ``torch.no_grad()`` computes the same values; what it allows that inference mode does not
    (using its outputs in autograd later, updating them in place) changes nothing for code that
    ran under inference mode. The ``with`` block and the decorator forms are converted, and
    ``inference_mode(True)``; ``inference_mode(False)`` (gradients as usual) is left, and a
    mode read at run time is flagged (``torch.set_grad_enabled(not mode)`` is its form).
    PyTorch/XLA only, as the family.
    """

    CODE = "XLA904"
    NAME = "inference-mode"
    SUMMARY = "torch.inference_mode(), under which torch_xla cannot run linear layers, becomes torch.no_grad()"
    FIX = SAFE
    SEVERITY = "warning"
    TRIGGERS = (words("inference_mode"),)
    RUNTIMES = ("torch-xla",)
    BEFORE = "with torch.inference_mode():\n    logits = model(x)\n"
    AFTER = "with torch.no_grad():\n    logits = model(x)\n"

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        # the bare decorator: @torch.inference_mode
        if isinstance(original.decorator, cst.Call) or self.qualname(original.decorator) not in INFERENCE_MODE:
            return updated
        message = f"`@{snippet(original.decorator)}`: {FAILS}; it becomes `@torch.no_grad()`, which computes the same"
        return self.replace(
            original,
            updated,
            updated.with_changes(decorator=parse_expr("torch.no_grad()")),
            message,
            imports=[TORCH],
            drop_if_unused=IMPORTED,
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in INFERENCE_MODE:
            return updated
        mode = original.args[0].value if original.args else None
        if mode is not None and _literal(mode) is False:
            return updated  # gradients as usual: nothing runs in inference mode
        if mode is not None and _literal(mode) is None:
            self.flag(
                original,
                f"`{snippet(original)}`: {FAILS}; with a mode read at run time, "
                f"`torch.set_grad_enabled(not {snippet(mode)})` computes the same",
            )
            return updated
        message = f"`{snippet(original)}`: {FAILS}; it becomes `torch.no_grad()`, which computes the same"
        return self.replace(
            original, updated, parse_expr("torch.no_grad()"), message, imports=[TORCH], drop_if_unused=IMPORTED
        )


def _literal(node: cst.BaseExpression) -> bool | None:
    """``True`` / ``False`` written as such; None for anything read at run time."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None
