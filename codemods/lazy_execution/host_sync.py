"""XLA202: reading a tensor's value on the host every step (``loss.item()``) stalls the
XLA pipeline (the migration guide's "Understanding Lazy Execution and Synchronization")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import ON_ACCELERATOR, Rule

HOST_SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
TENSOR_NAME = re.compile(r"loss|acc|correct|metric|score", re.IGNORECASE)


def _is_interval_guard(test: cst.BaseExpression) -> bool:
    """``i % log_interval == 0`` (also inside ``and``): logging every N steps."""
    if isinstance(test, cst.BooleanOperation):
        return _is_interval_guard(test.left) or _is_interval_guard(test.right)
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.BinaryOperation)
        and isinstance(test.left.operator, cst.Modulo)
    )


class HostSyncInTrainingLoop(Rule):
    """Reading a tensor's value on the host every step stalls the XLA pipeline.

    Guide, "Understanding Lazy Execution": ``.item()``, ``.tolist()``, ``.cpu()``,
    ``.numpy()``, ``float(loss)`` and ``print(loss)`` wait for the device and copy the
    value to the host. Once per step (in a loop that calls ``backward()`` or steps an
    optimizer) that serialises host and device; behind an interval guard
    (``if i % log_interval == 0``) it is fine and stays silent. ``total += loss.item()``
    can stay on the device: the unsafe fix makes it ``total += loss.detach()`` (``total``
    becomes a tensor: read it once after the loop, e.g. with ``float(total)``).
    Matched by shape: any ``x.item()`` is taken to be a tensor's.

    PyTorch/XLA only: under TorchTPU, which runs eagerly, a read waits for the ops before it as it
    did on CUDA, and compiles nothing.
    """

    CODE = "XLA202"
    NAME = "host-sync-in-training-loop"
    SUMMARY = "per-step .item() / .cpu() / .tolist() / print(loss) in a training loop"
    FIX = "unsafe"
    SEVERITY = "warning"
    TRIGGERS = (r"\.backward\(", r"\.step\(")  # it only looks inside loops that train
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    BEFORE = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    total += loss.item()\n"
    AFTER = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    total += loss.detach()\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.loops: list[bool] = []  # for each enclosing loop: does it train?
        self.guards: list[bool] = []  # for each enclosing if: is it an interval guard?
        self.summed: set[int] = set()  # the x.item() of `total += x.item()`: fixed, not hinted

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(calls_training_step(node.body))

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(calls_training_step(node.body))

    def leave_For(self, original, updated):
        self.loops.pop()
        return updated

    def leave_While(self, original, updated):
        self.loops.pop()
        return updated

    def visit_If(self, node: cst.If) -> None:
        self.guards.append(_is_interval_guard(node.test))

    def leave_If(self, original, updated):
        self.guards.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # a function defined in a loop is not run by it: start afresh
        self.loops.append(False)
        self.guards.append(False)

    def leave_FunctionDef(self, original, updated):
        self.loops.pop()
        self.guards.pop()
        return updated

    @property
    def hot(self) -> bool:
        return bool(self.loops) and self.loops[-1] and not any(self.guards)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is_item_sum(node):
            self.summed.add(id(node.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.hot or id(original) in self.summed:
            return updated
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value in HOST_SYNC_METHODS and not original.args:
            receiver = func.value
            already = (  # x.cpu().numpy(): hinted once, at .cpu()
                isinstance(receiver, cst.Call)
                and isinstance(receiver.func, cst.Attribute)
                and receiver.func.attr.value in HOST_SYNC_METHODS
            )
            if self.qualname(func) is None and not already:  # x.item(), not a module function
                self._hint(original, f"`.{func.attr.value}()`")
        elif isinstance(func, cst.Name) and func.value in ("float", "print") and self.qualname(func) is None:
            named = [a for a in original.args if isinstance(a.value, cst.Name) and TENSOR_NAME.search(a.value.value)]
            if named:
                self._hint(original, f"`{func.value}({named[0].value.value})`")
        return updated

    def _hint(self, node: cst.CSTNode, what: str) -> None:
        self.note(
            node,
            f"{what} copies a tensor to the host every step, which waits for the device; "
            "log every N steps (`if step % log_interval == 0:`) or keep the value on the device",
        )

    @staticmethod
    def _is_item_sum(node: cst.AugAssign) -> bool:
        value = node.value
        return (
            isinstance(node.operator, cst.AddAssign)
            and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "item"
            and not value.args
        )

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        if not (self.hot and self._is_item_sum(original)):
            return updated
        detached = cst.Call(func=cst.Attribute(value=updated.value.func.value, attr=cst.Name("detach")))
        return self.replace(
            original,
            updated,
            updated.with_changes(value=detached),
            "`+= x.item()` every step waits for the device: `+= x.detach()` keeps the sum on it "
            "(it becomes a tensor: read it once after the loop)",
        )
