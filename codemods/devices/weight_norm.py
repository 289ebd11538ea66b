"""XLA113: ``torch.nn.utils.weight_norm`` (a forward hook that keeps a computed weight)
becomes ``torch.nn.utils.parametrizations.weight_norm``, which a module's move to the XLA
device can carry (unsafe: the state_dict's keys differ)."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule import TORCH, UNSAFE, Rule, parse_expr, snippet, words

LEGACY = ("torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm")
PARAMETRIZED = "torch.nn.utils.parametrizations.weight_norm"


class LegacyWeightNorm(Rule):
    """The hook-based ``weight_norm`` becomes the parametrization.

    ``torch.nn.utils.weight_norm(module)`` (deprecated since torch 2.1) splits the weight
    into ``weight_g`` and ``weight_v`` and keeps ``module.weight`` as a tensor computed from
    them, which holds them in its autograd graph. With parameters swapped on conversion
    (XLA109, which a move to the XLA device needs to keep optimizers and tied weights), the
    move then raises ``_apply(): Couldn't swap Conv1d.weight_g``: something else holds the
    parameter. ``torch.nn.utils.parametrizations.weight_norm`` computes the same weight
    (the same ``g * v / ||v||``, the same ``name`` and ``dim``) as a parametrization, which
    the move carries (measured on torch_xla 2.9, CPU PJRT). Unsafe: the state_dict names the
    parts ``parametrizations.weight.original0`` / ``original1`` instead of ``weight_g`` /
    ``weight_v``, so a checkpoint saved before loads only once its keys are renamed, and
    ``remove_weight_norm`` becomes ``torch.nn.utils.parametrize.remove_parametrizations(module,
    "weight")``. Held back, the move crashes: the finding is marked in the code.
    """

    CODE = "XLA113"
    NAME = "legacy-weight-norm"
    SUMMARY = "torch.nn.utils.weight_norm becomes torch.nn.utils.parametrizations.weight_norm"
    FIX = UNSAFE
    MARK_HELD_BACK = True  # held back, the module's move to the device raises
    TRIGGERS = (words("weight_norm"),)
    BEFORE = "import torch.nn as nn\n\nconv = nn.utils.weight_norm(nn.Conv1d(8, 8, 3))\n"
    AFTER = "import torch.nn as nn\n\nconv = nn.utils.parametrizations.weight_norm(nn.Conv1d(8, 8, 3))\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if self.qualname(func) not in LEGACY:
            return updated
        if isinstance(func, cst.Attribute) and self.qualname(func.value) == "torch.nn.utils":
            new_func = updated.func.with_changes(
                value=cst.Attribute(value=updated.func.value, attr=cst.Name("parametrizations"))
            )
            imports, drops = (), ()
        else:  # from torch.nn.utils import weight_norm
            local = self.ctx.binds("torch")
            new_func = parse_expr(f"{local or 'torch'}.nn.utils.parametrizations.weight_norm")
            imports, drops = (() if local else (TORCH,)), tuple(self.ctx.import_behind(func))
        return self.replace(
            original,
            updated,
            updated.with_changes(func=new_func),
            f"`{snippet(original)}`: the hook-based weight_norm keeps a computed weight that holds its "
            f"parameters, so a move to the device with parameters swapped on conversion (XLA109) raises "
            f'"Couldn\'t swap"; `{PARAMETRIZED}` computes the same weight and moves (its state_dict keys '
            "are `parametrizations.weight.original0/1`, not `weight_g/weight_v`)",
            imports=imports,
            drop_if_unused=drops,
        )
