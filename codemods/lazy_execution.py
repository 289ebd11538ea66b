"""XLA2xx: lazy execution: where the graph of a training step is cut and run.

Follows the migration guide's "Understanding Lazy Execution and Synchronization": on
XLA, operations only build a graph; ``torch_xla.sync()`` compiles and runs it, once per
training iteration, right after ``optimizer.step()``.
"""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule import SAFE, TORCH_XLA, Rule

OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?(\d*|_\w+)$|optimi[sz]er", re.IGNORECASE)
SYNC_CALLS = {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.core.xla_model.optimizer_step"}


def _last_name(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


class SyncAfterOptimizerStep(Rule):
    """One ``torch_xla.sync()`` right after the optimizer step of each training iteration.

    Guide, "Understanding Lazy Execution": without it the graph of every step is added
    to the last one and is compiled anew at each ``.item()``, so training is slow and
    recompiles. The sync goes after the last optimizer step of a block (a GAN's two
    optimizers get one sync), inside the ``if`` of gradient accumulation, and nowhere a
    sync, ``xm.mark_step()`` or ``xm.optimizer_step()`` already follows. Optimizers are
    matched by shape: ``<name>.step()`` where the name says optimizer (``optimizer``,
    ``opt_d``, ``self.optim``), or ``scaler.step(optimizer)`` (the sync then follows
    ``scaler.update()``); LR schedulers are not.
    """

    CODE = "XLA201"
    NAME = "sync-after-optimizer-step"
    SUMMARY = "torch_xla.sync() after the optimizer step of each training iteration"
    FIX = SAFE
    TRIGGERS = (r"\.step\(",)
    BEFORE = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
    AFTER = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        steps = [i for i, statement in enumerate(original.body) if self._is_optimizer_step(statement)]
        if not steps:
            return updated
        last = steps[-1]
        while last + 1 < len(original.body) and self._is_scaler_update(original.body[last + 1]):
            last += 1  # scaler.step(optimizer); scaler.update(): the step ends after the update
        if any(self._is_sync(statement) for statement in original.body[last + 1 :]):
            return updated
        if len(updated.body) != len(original.body):
            return updated  # another rule changed this block's statements; positions no longer line up
        sync = cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression("torch_xla.sync()"))])
        body = [*updated.body[: last + 1], sync, *updated.body[last + 1 :]]
        return self.replace(
            original.body[last],
            updated,
            updated.with_changes(body=body),
            "`torch_xla.sync()` added after the optimizer step: it compiles and runs the step's graph",
            imports=[TORCH_XLA],
        )

    def _call_of(self, statement: cst.BaseStatement) -> cst.Call | None:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                return small.value
        return None

    def _is_optimizer_step(self, statement: cst.BaseStatement) -> bool:
        call = self._call_of(statement)
        if call is None or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "step":
            return False
        owner = _last_name(call.func.value)
        if OPTIMIZER_NAME.search(owner) and "sched" not in owner.lower():
            return not call.args or all(a.keyword is not None for a in call.args)
        # scaler.step(optimizer)
        return "scaler" in owner.lower() and bool(call.args) and bool(OPTIMIZER_NAME.search(_last_name(call.args[0].value)))

    def _is_scaler_update(self, statement: cst.BaseStatement) -> bool:
        call = self._call_of(statement)
        return (
            call is not None
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "update"
            and "scaler" in _last_name(call.func.value).lower()
        )

    def _is_sync(self, statement: cst.BaseStatement) -> bool:
        call = self._call_of(statement)
        return call is not None and self.qualname(call.func) in SYNC_CALLS
