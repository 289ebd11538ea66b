"""XLA108: ``torch.load`` loads to the CPU (the migration guide's "Saving and Loading
Models"): a ``map_location`` that names CUDA or the device becomes ``"cpu"``; under
``--runtime torch-tpu`` one that names CUDA becomes ``"tpu"``."""

from __future__ import annotations

import libcst as cst

from codemods.devices.cuda_device import picks_by_availability, with_xla_branch
from codemods.shared.device_values import (
    cuda_choice,
    device_string,
    is_cuda_value,
    is_other_device,
    names_device,
    target_name,
)
from migrate_xla.rule.api import SAFE, Rule, append_keyword, call_arg, code_of

MAP_LOCATION_NOTE = (
    "torch.load cannot restore tensors onto an XLA device: it loads to the CPU, "
    "and load_state_dict copies onto the device (move other loaded tensors with .to(device))"
)
TPU_MAP_LOCATION_NOTE = "TorchTPU restores tensors onto its device, as CUDA did"
TPU_MISSING_NOTE = (
    "load_state_dict copies onto the device (move other loaded tensors with .to(device), "
    'or map them with map_location="tpu")'
)


class LoadMapLocation(Rule):
    """``torch.load`` always loads to the CPU.

    Guide, "Saving and Loading Models": load the state to the CPU, then move it to
    the device. ``torch.load(..., map_location=<xla device>)`` fails ("don't know how
    to restore data location ... tagged with xla"), and a checkpoint saved on a GPU
    cannot be loaded without a GPU unless it is mapped, so a CUDA or device
    ``map_location`` becomes ``"cpu"`` and a missing one is added.

    Under ``--runtime torch-tpu`` TorchTPU's device restores as CUDA's did (torch
    serializes a privateuse1 device like any other), so a ``map_location`` that names CUDA
    (``"cuda:0"``, ``torch.device("cuda", rank)``, ``lambda storage, loc:
    storage.cuda(rank)``, ``{"cuda:1": "cuda:0"}``) becomes ``"tpu"`` (a choice on the
    user's own flag keeps its CPU branch, ``"tpu" if args.cuda else "cpu"``), one that names
    the device (``map_location=device``, now ``torch.device("tpu")``) stays, and a missing
    one is ``"cpu"`` as on XLA: a GPU checkpoint loads on a machine without a GPU.
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
            note = MAP_LOCATION_NOTE if self.ctx.runtime == "torch-xla" else TPU_MISSING_NOTE
            return self.replace(
                original,
                updated,
                append_keyword(updated, "map_location", cpu),
                f'`torch.load` without map_location: loads to "cpu" so a GPU checkpoint loads without a GPU; {note}',
            )
        if self.ctx.runtime == "torch-tpu":
            return self._to_tpu(original, updated, arg)
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

    def _to_tpu(self, original: cst.Call, updated: cst.Call, arg: cst.Arg):
        """A ``map_location`` that names CUDA restores onto TorchTPU's device instead."""
        value = arg.value
        if is_other_device(value) or not self._names_cuda(value):
            return updated  # "cpu", the device variable (the TPU now), a function of the user's
        index = next(i for i, a in enumerate(original.args) if a is arg)
        args = list(updated.args)
        device_type = self.ctx.api.device_type
        if cuda_choice(value) is not None and not picks_by_availability(value):
            cuda_first = is_cuda_value(value.body)  # "cuda" if args.cuda else "cpu": the choice stays
            self.ctx.forget_fixes_inside(value.body if cuda_first else value.orelse)
            new = with_xla_branch(
                args[index].value, cuda_first, device_string(value.body if cuda_first else value.orelse, device_type)
            )
        else:
            self.ctx.forget_fixes_inside(value)  # lambda storage, loc: storage.cuda(rank)
            new = device_string(value, device_type)
        args[index] = args[index].with_changes(value=new)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            f"`map_location={code_of(value)}` -> `{code_of(new)}`: {TPU_MAP_LOCATION_NOTE}",
        )

    def _names_cuda(self, value: cst.BaseExpression) -> bool:
        """``"cuda:0"``, a CUDA/CPU choice, ``torch.device("cuda", rank)``, a lambda or dict that names CUDA."""
        if is_cuda_value(value):
            return True
        if isinstance(value, (cst.Lambda, cst.Dict)):
            return "cuda" in code_of(value)
        if isinstance(value, cst.Call) and self.qualname(value.func) == "torch.device":
            kind = call_arg(value, 0, "type")
            return kind is not None and is_cuda_value(kind.value)
        return False

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
