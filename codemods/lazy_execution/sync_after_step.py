"""XLA201: one ``torch_xla.sync()`` at the end of each training iteration, after its
parameter update (the migration guide's "Understanding Lazy Execution and Synchronization")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.lazy_execution.common import NESTED_SCOPES, NO_GRAD, SYNC_CALLS, is_sync_statement
from codemods.shared.statements import call_of
from codemods.shared.training_loops import OPTIMIZER_NAME, calls_training_step
from migrate_xla.rule.api import (
    ON_ACCELERATOR,
    SAFE,
    TORCH_XLA,
    Rule,
    children,
    code_nodes,
    code_of,
    last_name,
    names_trigger,
    subtree,
)

# A torch_xla.sync() inside a profiler trace raises "Expecting scope to be empty"; a
# StepTrace syncs on exit by itself.
TRACE = "torch_xla.debug.profiler.Trace"
STEP_TRACE = "torch_xla.debug.profiler.StepTrace"

# How a file that already syncs spells it (the last parts of SYNC_CALLS, and StepTrace).
SYNC_WORDS = names_trigger(*SYNC_CALLS, STEP_TRACE)

LOOPS = (cst.For, cst.While)
STEP, UPDATE, SYNC, NESTED = "step", "update", "sync", "nested"  # what a statement is to an iteration


class SyncAfterOptimizerStep(Rule):
    """One ``torch_xla.sync()`` at the end of each training iteration, after its parameter update.

    Guide, "Understanding Lazy Execution": without it the graph of every step is added
    to the last one and is compiled anew at each ``.item()``, so training is slow and
    recompiles; with parameters updated in place the graph grows with every batch and a
    run never finishes. The update is an optimizer step or one written by hand:

    - ``<name>.step()`` where the name says optimizer (``optimizer``, ``opt_d``,
      ``self.optim``), also ``optimizer.step(closure)`` (L-BFGS: the sync follows the step,
      never the closure; a positional argument must be named ``closure`` or be a lambda, so
      ``dist_optim.step(context_id)`` is not taken); ``scaler.step(optimizer)`` by any name
      (the sync then follows ``scaler.update()``). LR schedulers are not steps.
    - a loop over parameters that changes each in place with a value computed from its
      gradient (``for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)``,
      ``p -= lr * p.grad``, ``d_p = p.grad`` then ``p.sub_(lr * d_p)``, also over
      ``optimizer.param_groups``), or such a line on its own (``w -= lr * w.grad``). A
      ``with torch.no_grad():`` around them gets the sync after it. Loops that move
      parameters, clip weights or touch only gradients are no updates.

    The sync goes after the last update of a block: a GAN's two optimizers get one, after
    the second, also when one of them steps under an ``if`` (the sync then follows that
    ``if``). An update that only happens under an ``if`` (gradient accumulation) gets its
    sync inside the ``if``; one in a helper function or method (``_run_batch``) gets it in
    the helper. No sync is added where the iteration already has one: a sync,
    ``xm.mark_step()`` or ``xm.optimizer_step()`` anywhere in the update's block or in the
    blocks around it up to the loop, or after a call of the helper in this file. A step
    inside ``with xp.Trace(...)`` gets its sync after the ``with`` (a sync inside a trace
    raises "Expecting scope to be empty"); inside ``xp.StepTrace`` none, since the
    StepTrace syncs when it closes. Nothing is added inside an optimizer class (a base
    class named like an optimizer) or in a hand-written update in a function named
    ``step``: its caller's ``optimizer.step()`` gets the sync. Both kinds are matched by shape.

    PyTorch/XLA only: TorchTPU runs each op eagerly, as CUDA does, so there is no pending graph to cut.
    """

    CODE = "XLA201"
    NAME = "sync-after-optimizer-step"
    SUMMARY = "torch_xla.sync() after the optimizer step or hand-written parameter update of each training iteration"
    FIX = SAFE
    TRIGGERS = (r"\.step\(", r"\.grad\b")
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    CONTEXT = (SYNC_WORDS,)  # a sync around a helper's call keeps the helper's update from getting its own
    BEFORE = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
    AFTER = "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.plans: dict[int, tuple[int, str]] = {}  # block -> (the statement the sync follows, what it ends)
        self.covered: set[int] = set()  # blocks whose iteration is synced by a block around them
        self.scopes: list[str | None] = []  # the enclosing functions (their names) and loops (None)
        self.optimizer_classes: list[bool] = []  # for each enclosing class: is it an optimizer?
        self.module: cst.Module | None = None
        self.synced_callers: set[str] | None = None  # functions called next to a sync in this file
        self.kinds: dict[int, str | None] = {}  # statement -> what it is to the iteration (memo)

    # -- where the iteration is ---------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.optimizer_classes.append(any(OPTIMIZER_NAME.search(last_name(base.value)) for base in node.bases))

    def leave_ClassDef(self, original, updated):
        self.optimizer_classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node.name.value)

    def leave_FunctionDef(self, original, updated):
        self.scopes.pop()
        return updated

    def visit_For(self, node: cst.For) -> None:
        self.scopes.append(None)

    def leave_For(self, original, updated):
        self.scopes.pop()
        return updated

    def visit_While(self, node: cst.While) -> None:
        self.scopes.append(None)

    def leave_While(self, original, updated):
        self.scopes.pop()
        return updated

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """Plan this block's sync on the way down, so that the blocks inside it know it is taken."""
        if id(node) in self.covered:
            return
        kinds = [self._kind(statement) for statement in node.body]
        units = [i for i, kind in enumerate(kinds) if kind in (STEP, UPDATE)]
        if not units and SYNC not in kinds:
            return  # updates only under an `if` or a `with`: the blocks inside place their syncs
        for statement, kind in zip(node.body, kinds):
            if kind is not None:
                self._cover(statement)
        if SYNC in kinds or not units or self._synced_elsewhere(all(kinds[i] == UPDATE for i in units)):
            return
        last = max(i for i, kind in enumerate(kinds) if kind is not None)
        while last + 1 < len(node.body) and self._is_scaler_update(node.body[last], node.body[last + 1]):
            last += 1  # scaler.step(optimizer); scaler.update(): the step ends after the update
        if kinds[last] == NESTED:  # the last update is conditional: the sync follows its `if`
            what = f"the `{_keyword(node.body[last])}` that holds the iteration's last update"
        elif all(kinds[i] == UPDATE for i in units):
            what = "the hand-written parameter update"
        else:
            what = "the optimizer step"
        self.plans[id(node)] = (last, what)

    def _synced_elsewhere(self, by_hand: bool) -> bool:
        """The update of this block is synced outside it, or is an optimizer's own."""
        if any(self._traces(s) for s in self.ctx.statements):
            return True  # the sync goes after the `with xp.Trace(...)`, or a StepTrace syncs
        if any(self.optimizer_classes):
            return True  # an optimizer's step(): its caller's `optimizer.step()` gets the sync
        function = next((name for name in reversed(self.scopes) if name is not None), None)
        if by_hand and function == "step":
            return True  # a hand-written optimizer's step(), called as `optimizer.step()`
        if not self.scopes or self.scopes[-1] is None:
            return False
        if self.synced_callers is None:  # found once, when the imports have been seen
            has_sync = self.module is not None and re.search(SYNC_WORDS, self.ctx.source)
            self.synced_callers = self._called_next_to_a_sync(self.module) if has_sync else set()
        return self.scopes[-1] in self.synced_callers

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        plan = self.plans.pop(id(original), None)
        if plan is None:
            return updated
        if len(updated.body) != len(original.body):
            return updated  # another rule changed this block's statements; positions no longer line up
        last, what = plan
        sync = cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression("torch_xla.sync()"))])
        body = [*updated.body[: last + 1], sync, *updated.body[last + 1 :]]
        return self.replace(
            original.body[last],
            updated,
            updated.with_changes(body=body),
            f"`torch_xla.sync()` added after {what}: it compiles and runs the step's graph",
            imports=[TORCH_XLA],
        )

    # -- what a statement is to the iteration -------------------------------------------
    def _kind(self, statement: cst.BaseStatement) -> str | None:
        """STEP or UPDATE (it updates the parameters), SYNC (it ends the iteration's graph),
        NESTED (an ``if``, ``try`` or ``with`` with one of those inside), or None."""
        key = id(statement)
        if key not in self.kinds:
            self.kinds[key] = self._classify(statement)
        return self.kinds[key]

    def _classify(self, statement: cst.BaseStatement) -> str | None:
        if type(statement) is cst.SimpleStatementLine:
            if is_sync_statement(self, statement):
                return SYNC
            if self._is_optimizer_step(statement):
                return STEP
            return UPDATE if _updated_from_grad(statement) else None
        if type(statement) is cst.With:
            traces = self._traces(statement)
            if STEP_TRACE in traces:
                return SYNC
            if type(statement.body) is cst.SimpleStatementSuite:  # with torch.no_grad(): w -= lr * w.grad
                return UPDATE if self._disables_grad(statement) and _updated_from_grad(statement.body) else None
            inner = [self._kind(s) for s in statement.body.body]
            if traces or self._disables_grad(statement):  # the update and its `with` are one
                if STEP in inner or (traces and NESTED in inner):
                    return STEP
                if UPDATE in inner:
                    return UPDATE
        if type(statement) in LOOPS:  # another loop is an iteration of its own
            return UPDATE if _is_parameter_loop(statement) else None
        if any(self._kind(inner) is not None for block in self._inner_blocks(statement) for inner in block.body):
            return NESTED
        return None

    def _inner_blocks(self, statement: cst.BaseStatement) -> list[cst.IndentedBlock]:
        """The blocks of an ``if`` / ``try`` / ``with`` (with their ``elif``, ``else``, ``except``
        and ``finally``) and of a loop over parameters: those that run in the same iteration."""
        kind = type(statement)
        if kind is cst.SimpleStatementLine or kind in NESTED_SCOPES:
            return []
        if kind in LOOPS and self._kind(statement) != UPDATE:
            return []
        return _blocks_of(statement)

    def _cover(self, statement: cst.BaseStatement) -> None:
        """The blocks in ``statement`` (not in its loops, unless they loop over parameters) add no sync."""
        for block in self._inner_blocks(statement):
            self.covered.add(id(block))
            for inner in block.body:
                self._cover(inner)

    def _disables_grad(self, statement: cst.With) -> bool:
        return any(
            self.qualname(item.item.func if isinstance(item.item, cst.Call) else item.item) in NO_GRAD
            for item in statement.items
        )

    def _traces(self, statement: cst.CSTNode) -> set[str]:
        """The profiler traces a ``with`` statement opens (empty for anything else)."""
        if not isinstance(statement, cst.With):
            return set()
        calls = [item.item for item in statement.items if isinstance(item.item, cst.Call)]
        return {self.qualname(call.func) for call in calls} & {TRACE, STEP_TRACE}

    def _is_optimizer_step(self, statement: cst.BaseStatement) -> bool:
        call = call_of(statement)
        if call is None or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "step":
            return False
        owner = last_name(call.func.value)
        if OPTIMIZER_NAME.search(owner) and "sched" not in owner.lower():
            positional = [a.value for a in call.args if a.keyword is None]
            return not positional or (len(positional) == 1 and _is_closure(positional[0]))
        # scaler.step(optimizer), whatever the scaler is called
        return bool(call.args) and bool(OPTIMIZER_NAME.search(last_name(call.args[0].value)))

    def _is_scaler_update(self, step: cst.BaseStatement, statement: cst.BaseStatement) -> bool:
        """``statement`` is ``scaler.update()`` of the scaler that ``step`` stepped with."""
        step_call, call = call_of(step), call_of(statement)
        return (
            step_call is not None
            and call is not None
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "update"
            and not call.args
            and step_call.args != ()
            and call.func.value.deep_equals(step_call.func.value)
        )

    def _called_next_to_a_sync(self, module: cst.Module) -> set[str]:
        """The names of functions called in a block that also syncs (``self._run_batch(x)``
        then ``xm.mark_step()``): their updates are synced by the caller."""
        names: set[str] = set()
        for block in code_nodes(module):
            body = getattr(block, "body", None)
            if not isinstance(body, (list, tuple)) or not any(is_sync_statement(self, s) for s in body):
                continue
            for statement in body:
                for node in _within_iteration(statement):
                    if isinstance(node, cst.Call):
                        names.add(last_name(node.func))
        names.discard("")
        return names


def _is_closure(node: cst.BaseExpression) -> bool:
    """``closure`` or ``lambda: ...`` in ``optimizer.step(closure)`` (L-BFGS); not the gradients
    or context id that functional and distributed optimizers take (``optim.step(grads)``)."""
    return type(node) is cst.Lambda or (type(node) is cst.Name and "closure" in node.value.lower())


def _within_iteration(node: cst.CSTNode):
    """``node`` and the nodes below it that run in the same iteration: not in loops or defs."""
    yield node
    for child in children(node):
        if not isinstance(child, (*LOOPS, *NESTED_SCOPES)):
            yield from _within_iteration(child)


def _keyword(statement: cst.BaseStatement) -> str:
    """``if``, ``try``, ``with``: how a compound statement starts, for messages."""
    return {cst.If: "if", cst.Try: "try", cst.TryStar: "try", cst.With: "with"}.get(type(statement), "block")


def _blocks_of(statement: cst.BaseStatement) -> list[cst.IndentedBlock]:
    """The blocks a compound statement owns (an ``elif`` is an ``If`` in its ``orelse``)."""
    blocks = []
    for child in children(statement):
        if isinstance(child, (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
            child = child.body
        if type(child) is cst.IndentedBlock:
            blocks.append(child)
        elif type(child) is cst.If:  # elif
            blocks.extend(_blocks_of(child))
    return blocks


# -- parameter updates written by hand ---------------------------------------------------


def _tensor_name(node: cst.CSTNode) -> str | None:
    """``p`` for ``p`` and ``p.data``, ``self.w`` for ``self.w``: the tensor a write changes."""
    if type(node) is cst.Attribute and node.attr.value == "data":
        node = node.value
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    return ".".join([node.value, *reversed(parts)])


def _small_statements(node: cst.CSTNode):
    """The simple statements (``x = ...``, ``p -= ...``, calls) of ``node``, in code order, in
    its blocks and their blocks, not in nested functions or classes."""
    if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        yield from node.body
    elif isinstance(node, cst.BaseSuite):
        for statement in node.body:
            yield from _small_statements(statement)
    elif not isinstance(node, NESTED_SCOPES):
        for child in children(node):
            if isinstance(child, (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
                child = child.body
            if isinstance(child, (cst.BaseSuite, cst.BaseCompoundStatement)):
                yield from _small_statements(child)


def _updated_from_grad(node: cst.CSTNode) -> set[str]:
    """The tensors ``node`` changes in place with a value computed from their own gradient:
    ``w -= lr * w.grad``, ``p.data.add_(p.grad, alpha=-lr)``, ``p.data = p.data - lr * p.grad``,
    also through local names (``d_p = p.grad``, then ``p.add_(d_p, alpha=-lr)``). A write
    whose value has no gradient in it (``p.data = p.to(device)``, ``p.clamp_(-c, c)``) is not
    an update, nor a write to a gradient (``p.grad.zero_()``)."""
    assigned: dict[str, list[cst.BaseExpression]] = {}  # local name -> the values given to it
    writes: list[tuple[str, list[cst.BaseExpression]]] = []  # tensor changed in place, from what
    for small in _small_statements(node):
        kind = type(small)
        if kind is cst.Assign:
            for target in small.targets:
                if type(target.target) is cst.Name:
                    assigned.setdefault(target.target.value, []).append(small.value)
                elif type(target.target) is cst.Attribute and target.target.attr.value == "data":
                    writes.append((_tensor_name(target.target), [small.value]))
        elif kind is cst.AugAssign:
            writes.append((_tensor_name(small.target), [small.value]))
        elif kind is cst.Expr and type(small.value) is cst.Call and type(small.value.func) is cst.Attribute:
            method = small.value.func.attr.value
            if method.endswith("_") and not method.startswith("_"):  # in-place: add_, sub_, copy_
                writes.append((_tensor_name(small.value.func.value), [a.value for a in small.value.args]))

    return {written for written, values in writes if written is not None and written in _gradients_in(values, assigned)}


def _gradients_in(values: list[cst.BaseExpression], assigned: dict[str, list[cst.BaseExpression]]) -> set[str]:
    """The tensors whose ``.grad`` ``values`` read, also through the local names ``assigned``
    (each name followed once)."""
    found: set[str] = set()
    seen: set[str] = set()
    stack = list(values)
    while stack:
        for inner in subtree(stack.pop()):
            if type(inner) is cst.Attribute and inner.attr.value == "grad":
                found.add(_tensor_name(inner.value))
            elif type(inner) is cst.Name and inner.value in assigned and inner.value not in seen:
                seen.add(inner.value)
                stack.extend(assigned[inner.value])
    return found


def _is_parameter_loop(statement: cst.CSTNode) -> bool:
    """``for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)``: a loop that updates
    its own loop variable from its gradient (``_updated_from_grad``), or a
    loop over something named ``param...`` around one (``for group in opt.param_groups``).
    A loop that calls ``backward()`` or steps an optimizer is a training loop, not this."""
    if type(statement) is not cst.For:
        return False
    own = {n.value for n in subtree(statement.target) if type(n) is cst.Name}
    updates = bool(own & _updated_from_grad(statement.body)) or (
        "param" in code_of(statement.iter).lower()
        and any(_is_parameter_loop(inner) for block in _blocks_of(statement) for inner in block.body)
    )
    return updates and not calls_training_step(statement.body)
