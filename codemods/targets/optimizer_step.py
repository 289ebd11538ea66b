"""XLA650 (``--target multiprocess``): ``optimizer.step()`` becomes
``xm.optimizer_step(optimizer)``, which reduces the gradients across replicas first (the
migration guide's "Distributed Training")."""

from __future__ import annotations

import libcst as cst

from codemods.shared.statements import call_of
from codemods.shared.training_loops import OPTIMIZER_NAME
from codemods.targets.common import TargetRule
from migrate_xla.rule.api import SAFE, XM, code_of, is_removed, last_name, parse_expr


class OptimizerStepAcrossReplicas(TargetRule):
    """``optimizer.step()`` becomes ``xm.optimizer_step(optimizer)`` in the multi-process form.

    Guide, "Distributed Training": ``xm.optimizer_step`` all-reduces (averages) the gradients
    of every replica before stepping; a plain ``optimizer.step()`` would let each process
    train its own model. Where XLA201's ``torch_xla.sync()`` follows the step, the two
    become one ``xm.optimizer_step(optimizer, barrier=True)``: the barrier is that same
    sync (torch_xla 2.9 calls ``torch_xla.sync()``), so the step's graph is still cut once,
    and XLA201 counts ``xm.optimizer_step`` as the step's sync on later runs. Optimizers are
    matched by name as XLA201 does; a ``scaler.step(optimizer)`` that stays (float16
    GradScaler) is flagged: the scaler must see reduced gradients (call
    ``xm.reduce_gradients(optimizer)`` before it).

    PyTorch/XLA only: ``xm.optimizer_step`` is torch_xla's, and ``--runtime torch-tpu`` refuses
    ``--target multiprocess`` (a TorchTPU script keeps its own launcher and DDP over the ``tpu`` group).
    """

    CODE = "XLA650"
    NAME = "xm-optimizer-step"
    SUMMARY = "optimizer.step() (and its sync) -> xm.optimizer_step(optimizer), which reduces gradients across replicas"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"\.step\(",)
    BEFORE = (
        "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"
    )
    AFTER = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    xm.optimizer_step(optimizer, barrier=True)\n"

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        if self.skip:
            return updated
        body = list(updated.body)
        index = 0
        while index < len(body):
            call = call_of(body[index])
            if call is not None and self._scaler_step(call):
                self.flag(
                    self._original(original, call) or original,
                    (
                        f"`{code_of(call)}` in the multi-process form: reduce the gradients first, "
                        f"`xm.reduce_gradients({code_of(call.args[0].value)})`, so every replica steps alike"
                    ),
                )
            elif call is not None and self._optimizer_step(call):
                after = next((i for i in range(index + 1, len(body)) if not is_removed(body[i])), None)
                barrier = after is not None and self._sync(body[after])
                optimizer = code_of(call.func.value)
                new = f"xm.optimizer_step({optimizer}{', barrier=True' if barrier else ''})"
                step = self._original(original, call) or original
                self.replace(
                    step,
                    updated,
                    None,
                    f"`{optimizer}.step()`{' and its `torch_xla.sync()`' if barrier else ''} -> `{new}`: "
                    "gradients are averaged across the replicas before the step",
                    imports=[XM],
                )
                if self.fixes(step):
                    body[index] = body[index].with_changes(body=[cst.Expr(parse_expr(new))])
                    if barrier:
                        del body[after]
            index += 1
        return updated.with_changes(body=body) if body != list(updated.body) else updated

    def _optimizer_step(self, call: cst.Call) -> bool:
        owner = last_name(call.func.value) if isinstance(call.func, cst.Attribute) else ""
        return (
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "step"
            and not call.args
            and bool(OPTIMIZER_NAME.search(owner))
            and "sched" not in owner.lower()
        )

    def _scaler_step(self, call: cst.Call) -> bool:
        return (
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "step"
            and len(call.args) == 1
            and bool(OPTIMIZER_NAME.search(last_name(call.args[0].value)))
        )

    def _sync(self, statement: cst.BaseStatement) -> bool:
        call = call_of(statement)
        return (
            call is not None
            and not call.args
            and (self.qualname(call.func) == "torch_xla.sync" or code_of(call.func) == "torch_xla.sync")
        )

    @staticmethod
    def _original(block: cst.IndentedBlock, call: cst.Call) -> cst.CSTNode | None:
        """The original statement of a call no earlier rule changed (for the finding's line)."""
        return next((s for s in block.body if (c := call_of(s)) is not None and c.deep_equals(call)), None)
