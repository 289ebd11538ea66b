"""XLA3xx: data loading for XLA devices (the migration guide's "Data Loading" section)."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule import SAFE, Rule, drop_items, string_value

PIN_OPTIONS = ("pin_memory", "pin_memory_device")


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"


def _is_pin_memory_arg(arg: cst.Arg) -> bool:
    return arg.keyword is not None and arg.keyword.value in PIN_OPTIONS


def _is_pin_memory_entry(element: cst.BaseDictElement) -> bool:
    return isinstance(element, cst.DictElement) and string_value(element.key) in PIN_OPTIONS


class PinMemory(Rule):
    """Pinned host memory is a CUDA transfer optimisation; there is nothing to pin on XLA.

    ``tensor.pin_memory()`` crashes without a GPU ("Found no NVIDIA driver"), and
    ``DataLoader(pin_memory=True)`` only warns that no accelerator was found. Host to
    device copies on XLA are overlapped by ``pl.MpDeviceLoader`` instead (guide, "Data
    Loading"). So ``.pin_memory()`` calls are dropped, and ``pin_memory`` (with its
    ``pin_memory_device``) arguments and loader-option dict entries are removed.
    ``pin_memory=False`` already pins nothing and is left as written. ``non_blocking=True``
    is kept: XLA accepts it.
    """

    CODE = "XLA301"
    NAME = "pin-memory"
    SUMMARY = "pin_memory=True and .pin_memory() are dropped (nothing to pin on XLA)"
    FIX = SAFE
    TRIGGERS = (r"pin_memory",)
    BEFORE = (
        "loader = DataLoader(ds, batch_size=64, pin_memory=True)\n"
        "kwargs = {'num_workers': 1, 'pin_memory': True}\n"
        "x = x.pin_memory()\n"
    )
    AFTER = "loader = DataLoader(ds, batch_size=64)\nkwargs = {'num_workers': 1}\nx = x\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory" and not updated.args:
            return self.replace(
                original, updated, func.value, "`.pin_memory()` dropped: nothing to pin on XLA"
            )
        if not self._pins(original.args, _is_pin_memory_arg):
            return updated
        replacement = updated.with_changes(args=drop_items(updated.args, _is_pin_memory_arg))
        return self.replace(
            original, updated, replacement, "`pin_memory=` removed: nothing to pin on XLA"
        )

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if not self._pins(original.elements, _is_pin_memory_entry):
            return updated
        replacement = updated.with_changes(elements=drop_items(updated.elements, _is_pin_memory_entry))
        return self.replace(
            original, updated, replacement, "`'pin_memory'` option removed: nothing to pin on XLA"
        )

    def _pins(self, items, is_pin_option) -> bool:
        """Whether ``items`` (original arguments or dict elements) ask for pinned memory.

        ``pin_memory=False`` alone does not. When they do, the fixes made inside the
        values about to be dropped (``pin_memory=torch.cuda.is_available()``) are forgotten.
        """
        values = [item.value for item in items if is_pin_option(item)]
        if not values or (len(values) == 1 and _is_false(values[0])):
            return False
        for value in values:
            self.ctx.forget_fixes_inside(value)
        return True
