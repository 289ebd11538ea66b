"""XLA108: ``torch.load`` loads to the CPU (the migration guide's "Saving and Loading
Models"): a ``map_location`` that names CUDA or the device becomes ``"cpu"``."""

from __future__ import annotations

import libcst as cst

from codemods.shared.device_values import is_cuda_value, is_other_device, names_device, target_name
from migrate_xla.rule import SAFE, Rule, append_keyword, call_arg, code_of

MAP_LOCATION_NOTE = (
    "torch.load cannot restore tensors onto an XLA device: it loads to the CPU, "
    "and load_state_dict copies onto the device (move other loaded tensors with .to(device))"
)


class LoadMapLocation(Rule):
    """``torch.load`` always loads to the CPU.

    Guide, "Saving and Loading Models": load the state to the CPU, then move it to
    the device. ``torch.load(..., map_location=<xla device>)`` fails ("don't know how
    to restore data location ... tagged with xla"), and a checkpoint saved on a GPU
    cannot be loaded without a GPU unless it is mapped, so a CUDA or device
    ``map_location`` becomes ``"cpu"`` and a missing one is added.
    """

    CODE = "XLA108"
    NAME = "load-map-location"
    SUMMARY = "torch.load(..., map_location=cuda/device) loads to 'cpu'"
    FIX = SAFE
    TRIGGERS = (r"load(?<!\wload)\(",)  # torch.load(...), load(...) however imported
    BEFORE = 'state = torch.load("ckpt.pt", map_location=device)\n'
    AFTER = 'state = torch.load("ckpt.pt", map_location="cpu")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.load":
            return updated
        arg = call_arg(original, 1, "map_location")
        cpu = cst.SimpleString('"cpu"')
        if arg is None:
            if any(a.star for a in original.args):
                return updated
            return self.replace(
                original,
                updated,
                append_keyword(updated, "map_location", cpu),
                f'`torch.load` without map_location: loads to "cpu" so a GPU checkpoint loads without a GPU; {MAP_LOCATION_NOTE}',
            )
        if is_other_device(arg.value) or not self._is_device(arg.value):
            return updated
        index = next(i for i, a in enumerate(original.args) if a is arg)
        self.ctx.forget_fixes_inside(arg.value)  # lambda storage, loc: storage.cuda(rank)
        args = list(updated.args)
        args[index] = args[index].with_changes(value=cpu)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            f'`map_location={code_of(arg.value)}` -> `"cpu"`: {MAP_LOCATION_NOTE}',
        )

    def _is_device(self, value: cst.BaseExpression) -> bool:
        if is_cuda_value(value):
            return True
        if isinstance(value, (cst.Lambda, cst.Dict)):
            return "cuda" in code_of(value)
        if isinstance(value, cst.Call) and self.qualname(value.func) == "torch.device":
            kind = call_arg(value, 0, "type")
            return kind is None or not is_other_device(kind.value)  # torch.device("cpu") is right already
        if isinstance(value, cst.Call) and self.qualname(value.func) == "torch_xla.device":
            return True
        return names_device(target_name(value))
