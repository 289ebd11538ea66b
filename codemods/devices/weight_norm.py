"""XLA113: ``torch.nn.utils.weight_norm`` (a forward hook that keeps a computed weight)
becomes ``torch.nn.utils.parametrizations.weight_norm``, which a module's move to the XLA
device can carry; ``remove_weight_norm`` and the parts ``weight_g`` / ``weight_v`` follow."""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule.api import SAFE, TORCH, Rule, parse_expr, snippet, words

LEGACY = ("torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm")
LEGACY_REMOVE = ("torch.nn.utils.remove_weight_norm", "torch.nn.utils.weight_norm.remove_weight_norm")
PARAMETRIZED = "torch.nn.utils.parametrizations.weight_norm"
REMOVE = "torch.nn.utils.parametrize.remove_parametrizations"
PARTS = {"weight_g": "original0", "weight_v": "original1"}  # the legacy parts of a weight named "weight"
# ``x.weight_g = ...``: a file that keeps parameters of that name itself (its own weight norm)
OWN_PARTS = re.compile(r"\.weight_[gv][ \t]*=(?!=)")


class LegacyWeightNorm(Rule):
    """The hook-based ``weight_norm`` becomes the parametrization.

    ``torch.nn.utils.weight_norm(module)`` (deprecated since torch 2.1) splits the weight
    into ``weight_g`` and ``weight_v`` and keeps ``module.weight`` as a tensor computed from
    them, which holds them in its autograd graph. With parameters swapped on conversion
    (XLA109, which a move to the XLA device needs to keep optimizers and tied weights), the
    move then raises ``_apply(): Couldn't swap Conv1d.weight_g``: something else holds the
    parameter. ``torch.nn.utils.parametrizations.weight_norm`` computes the same weight
    (the same ``g * v / ||v||``, the same ``name`` and ``dim``) as a parametrization, which
    the move carries (measured on torch_xla 2.9, CPU PJRT: locuslab/TCN's four benchmarks
    train to the GPU's losses, docs/realworld.md).

    Safe: the training computes the same values, and a checkpoint saved before still loads
    (the parametrization registers a ``load_state_dict`` hook that renames ``weight_g`` /
    ``weight_v`` to its ``parametrizations.weight.original0`` / ``original1``). What changes is
    what the file spells, and the rule follows it: ``remove_weight_norm(module, name)``
    becomes ``torch.nn.utils.parametrize.remove_parametrizations(module, name)`` (which
    leaves the weight computed, as the legacy one did), and ``m.weight_g`` / ``m.weight_v``
    become ``m.parametrizations.weight.original0`` / ``original1`` (not in a file that
    assigns such attributes itself: its own weight norm). What a new checkpoint's
    state_dict names differs: code elsewhere that reads its ``weight_g`` keys must follow.
    """

    CODE = "XLA113"
    NAME = "legacy-weight-norm"
    SUMMARY = "torch.nn.utils.weight_norm becomes torch.nn.utils.parametrizations.weight_norm"
    FIX = SAFE
    TRIGGERS = (words("weight_norm", "remove_weight_norm"),)
    CONTEXT = (words(*PARTS),)
    BEFORE = "import torch.nn as nn\n\nconv = nn.utils.weight_norm(nn.Conv1d(8, 8, 3))\n"
    AFTER = "import torch.nn as nn\n\nconv = nn.utils.parametrizations.weight_norm(nn.Conv1d(8, 8, 3))\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.rename_parts = False

    def visit_Module(self, node: cst.Module) -> None:
        self.ctx.need_whole_module(*PARTS)  # the parts' reads and whether the file assigns them
        text = self.ctx.source
        self.rename_parts = bool(re.search(words(*PARTS), text)) and not OWN_PARTS.search(text)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qualname = self.qualname(original.func)
        if qualname in LEGACY:
            return self._weight_norm(original, updated)
        if qualname in LEGACY_REMOVE:
            return self._remove(original, updated)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        part = PARTS.get(original.attr.value)
        if part is None or not self.rename_parts or self.qualname(original) is not None:
            return updated  # a module's attribute (torch.nn.utils.weight_g) is not a part
        parts = cst.Attribute(value=updated.value, attr=cst.Name("parametrizations"))
        replacement = updated.with_changes(
            value=cst.Attribute(value=parts, attr=cst.Name("weight")), attr=cst.Name(part)
        )
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}`: the hook-based weight_norm's part, now the parametrization's "
            f"`parametrizations.weight.{part}`",
        )

    def _weight_norm(self, original: cst.Call, updated: cst.Call):
        new_func, imports, drops = self._spelled(original.func, updated.func, PARAMETRIZED)
        return self.replace(
            original,
            updated,
            updated.with_changes(func=new_func),
            f"`{snippet(original)}`: the hook-based weight_norm keeps a computed weight that holds its "
            f"parameters, so a move to the device with parameters swapped on conversion (XLA109) raises "
            f'"Couldn\'t swap"; `{PARAMETRIZED}` computes the same weight and moves (its state_dict keys '
            "are `parametrizations.weight.original0/1`, not `weight_g/weight_v`; old checkpoints still load)",
            imports=imports,
            drop_if_unused=drops,
        )

    def _remove(self, original: cst.Call, updated: cst.Call):
        args = list(updated.args)
        if not args or args[0].star or len(args) > 2 or any(a.star for a in args):
            self.flag(original, f"`{snippet(original)}`: remove the parametrization XLA113 wrote with `{REMOVE}`")
            return updated
        if len(args) == 1:  # the legacy default name
            args = [
                args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(cst.SimpleString('"weight"')),
            ]
        elif args[1].keyword is not None and args[1].keyword.value == "name":
            args[1] = args[1].with_changes(keyword=cst.Name("tensor_name"))
        new_func, imports, drops = self._spelled(original.func, updated.func, REMOVE)
        return self.replace(
            original,
            updated,
            updated.with_changes(func=new_func, args=args),
            f"`{snippet(original)}` -> `{REMOVE}`: the hook-based weight_norm is now the parametrization",
            imports=imports,
            drop_if_unused=drops,
        )

    def _spelled(self, original: cst.BaseExpression, updated: cst.BaseExpression, path: str):
        """``path`` spelled as the file spelled ``torch.nn.utils`` in the call's function (``nn.utils.``)
        or from its ``torch``; the import it needs, and the one it may leave unused."""
        if isinstance(original, cst.Attribute) and self.qualname(original.value) == "torch.nn.utils":
            tail = path.removeprefix("torch.nn.utils.").split(".")
            new_func = updated.value
            for attr in tail:
                new_func = cst.Attribute(value=new_func, attr=cst.Name(attr))
            return new_func, (), ()
        local = self.ctx.binds("torch")
        new_func = parse_expr(f"{local or 'torch'}{path.removeprefix('torch')}")
        return new_func, (() if local else (TORCH,)), tuple(self.ctx.import_behind(original))
