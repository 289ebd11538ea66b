"""XLA2xx: lazy execution: where the graph of a training step is cut and run.

Follows the migration guide's "Understanding Lazy Execution and Synchronization": on
XLA, operations only build a graph; ``torch_xla.sync()`` compiles and runs it, once per
training iteration, right after ``optimizer.step()``.
"""

from __future__ import annotations

import re

import libcst as cst

from codemods.data_loading import BATCH_MOVE_CONTEXT
from migrate_xla.rule import SAFE, TORCH_XLA, Rule, children, last_name, subtree

OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?(\d*|_\w+)$|optimi[sz]er", re.IGNORECASE)
# A torch_xla.sync() inside a profiler trace raises "Expecting scope to be empty"; a
# StepTrace syncs on exit by itself.
TRACE = "torch_xla.debug.profiler.Trace"
STEP_TRACE = "torch_xla.debug.profiler.StepTrace"
SYNC_CALLS = {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.core.xla_model.optimizer_step"}


class SyncAfterOptimizerStep(Rule):
    """One ``torch_xla.sync()`` right after the optimizer step of each training iteration.

    Guide, "Understanding Lazy Execution": without it the graph of every step is added
    to the last one and is compiled anew at each ``.item()``, so training is slow and
    recompiles. The sync goes after the last optimizer step of a block (a GAN's two
    optimizers get one sync), inside the ``if`` of gradient accumulation, and nowhere a
    sync, ``xm.mark_step()`` or ``xm.optimizer_step()`` already follows. Optimizers are
    matched by shape: ``<name>.step()`` where the name says optimizer (``optimizer``,
    ``opt_d``, ``self.optim``), or ``scaler.step(optimizer)`` by any name (the sync then follows
    ``scaler.update()``); LR schedulers are not. A step inside ``with xp.Trace(...)`` gets
    its sync after the ``with`` (a sync inside a trace raises "Expecting scope to be
    empty"); inside ``xp.StepTrace`` none, since the StepTrace syncs when it closes.
    """

    CODE = "XLA201"
    NAME = "sync-after-optimizer-step"
    SUMMARY = "torch_xla.sync() after the optimizer step of each training iteration"
    FIX = SAFE
    TRIGGERS = (r"\.step\(",)
    BEFORE = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
    AFTER = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"

    def _traces(self, statement: cst.CSTNode) -> set[str]:
        """The profiler traces a ``with`` statement opens (empty for anything else)."""
        if not isinstance(statement, cst.With):
            return set()
        calls = [item.item for item in statement.items if isinstance(item.item, cst.Call)]
        return {self.qualname(call.func) for call in calls} & {TRACE, STEP_TRACE}

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        if self.ctx.statements and self._traces(self.ctx.statements[-1]):
            return updated  # the sync goes after the `with xp.Trace(...)`, or StepTrace does it
        steps = [i for i, statement in enumerate(original.body) if self._is_optimizer_step(statement)]
        if not steps:
            return updated
        last = steps[-1]
        while last + 1 < len(original.body) and self._is_scaler_update(original.body[last], original.body[last + 1]):
            last += 1  # scaler.step(optimizer); scaler.update(): the step ends after the update
        if any(_is_sync_statement(self, statement) for statement in original.body[last + 1 :]):
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

    def _is_optimizer_step(self, statement: cst.BaseStatement) -> bool:
        if self._traces(statement) == {TRACE}:  # with xp.Trace("step"): ... optimizer.step()
            return any(self._is_optimizer_step(s) for s in statement.body.body)
        call = _call_of(statement)
        if call is None or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "step":
            return False
        owner = last_name(call.func.value)
        if OPTIMIZER_NAME.search(owner) and "sched" not in owner.lower():
            return not call.args or all(a.keyword is not None for a in call.args)
        # scaler.step(optimizer), whatever the scaler is called
        return bool(call.args) and bool(OPTIMIZER_NAME.search(last_name(call.args[0].value)))

    def _is_scaler_update(self, step: cst.BaseStatement, statement: cst.BaseStatement) -> bool:
        """``statement`` is ``scaler.update()`` of the scaler that ``step`` stepped with."""
        step_call, call = _call_of(step), _call_of(statement)
        return (
            step_call is not None
            and call is not None
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "update"
            and not call.args
            and step_call.args != ()
            and call.func.value.deep_equals(step_call.func.value)
        )



HOST_SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
TENSOR_NAME = re.compile(r"loss|acc|correct|metric|score", re.IGNORECASE)


def _is_training_step_call(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and (
            node.func.attr.value == "backward"
            or (node.func.attr.value == "step" and bool(OPTIMIZER_NAME.search(last_name(node.func.value))))
        )
    )


def _trains(node: cst.CSTNode) -> bool:
    """Whether a loop body calls backward() or steps an optimizer (not looking into nested defs)."""
    if _is_training_step_call(node):
        return True
    return any(
        _trains(child)
        for child in children(node)
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
    )


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
    """

    CODE = "XLA202"
    NAME = "host-sync-in-training-loop"
    SUMMARY = "per-step .item() / .cpu() / .tolist() / print(loss) in a training loop"
    FIX = "unsafe"
    SEVERITY = "warning"
    TRIGGERS = (r"\.backward\(", r"\.step\(")  # it only looks inside loops that train
    BEFORE = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    total += loss.item()\n"
    AFTER = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    total += loss.detach()\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.loops: list[bool] = []  # for each enclosing loop: does it train?
        self.guards: list[bool] = []  # for each enclosing if: is it an interval guard?
        self.summed: set[int] = set()  # the x.item() of `total += x.item()`: fixed, not hinted

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(_trains(node.body))

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(_trains(node.body))

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


NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
FORWARD_NAME = re.compile(r"model|net|module|encoder|decoder|classifier|policy", re.IGNORECASE)


class SyncInEvaluationLoop(Rule):
    """An evaluation loop cuts its graph once per iteration, like a training step.

    Guide, "Understanding Lazy Execution": a loop that never steps an optimizer gets no
    sync from XLA201, and metrics accumulated on the device (``correct += (pred ==
    y).sum()``) would build one graph over the whole epoch. Where the loop iterates a
    DataLoader that XLA302 wraps in ``pl.MpDeviceLoader``, the loader syncs before each
    batch and nothing is added; any other loop under ``torch.no_grad()`` /
    ``torch.inference_mode()`` (a ``with`` block or a decorator) that runs a model
    (``model(x)``, ``net(x)``, ``self.encoder(x)``) or moves data to a device gets
    ``torch_xla.sync()`` at the end of its body; of nested loops, only the innermost
    that qualifies (a sync per inner iteration already cuts the outer loop's graph).
    """

    CODE = "XLA203"
    NAME = "sync-in-evaluation-loop"
    SUMMARY = "torch_xla.sync() at the end of evaluation loops under no_grad"
    FIX = SAFE
    TRIGGERS = (r"no_grad|inference_mode",)
    CONTEXT = (BATCH_MOVE_CONTEXT,)
    BEFORE = (
        "with torch.no_grad():\n"
        "    for x in batches:\n"
        "        total += model(x.to(device)).sum()\n"
    )
    AFTER = (
        "with torch.no_grad():\n"
        "    for x in batches:\n"
        "        total += model(x.to(device)).sum()\n"
        "        torch_xla.sync()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        from codemods.data_loading import BatchMoveProof  # XLA302's own test of the loops it wraps

        self.proof = BatchMoveProof(self)
        self.no_grad: list[bool] = []  # per enclosing with/def: does it turn gradients off?
        self.loops: set[int] = set()  # the evaluation loops found on the way down
        self.enclosing: list[int] = []  # the for loops around the current node, outermost first

    def visit_Module(self, node: cst.Module) -> None:
        self.proof.module = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self.proof.learn_binding(node)

    def _disables_grad(self, expression: cst.BaseExpression) -> bool:
        target = expression.func if isinstance(expression, cst.Call) else expression
        return self.qualname(target) in NO_GRAD

    def visit_With(self, node: cst.With) -> None:
        self.no_grad.append(any(self._disables_grad(item.item) for item in node.items))

    def leave_With(self, original, updated):
        self.no_grad.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.no_grad.append(any(self._disables_grad(d.decorator) for d in node.decorators))

    def leave_FunctionDef(self, original, updated):
        self.no_grad.pop()
        return updated

    def visit_For(self, node: cst.For) -> None:
        self.enclosing.append(id(node))
        if (
            any(self.no_grad)
            and isinstance(node.body, cst.IndentedBlock)
            and not _trains(node.body)
            and self._runs_the_device(node.body)
            and not any(_is_sync_statement(self, s) for s in subtree(node.body) if type(s) is cst.SimpleStatementLine)
            and not self.proof.iterates_device_loader(node.iter)
            and self.proof.plan(node) is None
        ):
            self.loops.add(id(node))

    def _runs_the_device(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
                return True
            if FORWARD_NAME.search(last_name(func)):
                return True
        return any(self._runs_the_device(child) for child in children(node))

    def leave_For(self, original: cst.For, updated: cst.For):
        self.enclosing.pop()
        if id(original) not in self.loops:
            return updated
        self.loops.discard(id(original))
        self.loops.difference_update(self.enclosing)  # the innermost loop's sync bounds the graph: one is enough
        sync = cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression("torch_xla.sync()"))])
        body = updated.body.with_changes(body=[*updated.body.body, sync])
        return self.replace(
            original,
            updated,
            updated.with_changes(body=body),
            "`torch_xla.sync()` added at the end of the evaluation loop: one graph per batch",
            imports=[TORCH_XLA],
        )


def _call_of(statement: cst.BaseStatement) -> cst.Call | None:
    """The call of a statement line that is nothing but a call, like ``optimizer.step()``."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return small.value
    return None


def _is_sync_statement(rule: Rule, statement: cst.BaseStatement) -> bool:
    """``torch_xla.sync()``, ``xm.mark_step()`` or ``xm.optimizer_step(...)`` on a line of its own."""
    call = _call_of(statement)
    return call is not None and rule.qualname(call.func) in SYNC_CALLS
