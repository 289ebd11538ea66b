"""XLA203: an evaluation loop cuts its graph once per iteration, like a training step
(the migration guide's "Understanding Lazy Execution and Synchronization")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.lazy_execution.common import NO_GRAD, is_sync_statement
from codemods.shared.batch_moves import BATCH_MOVE_CONTEXT, BatchMoveProof
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import ON_ACCELERATOR, SAFE, TORCH_XLA, Rule, children, last_name, subtree

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
    that qualifies (a sync per inner iteration already cuts the outer loop's graph). A
    sampling loop that XLA705 cuts every token (it feeds a growing ``idx`` back to the model)
    gets no sync at its end: that would make the concatenation a graph of its own each token.

    PyTorch/XLA only: TorchTPU runs each op eagerly, so an evaluation loop builds no graph to cut.
    """

    CODE = "XLA203"
    NAME = "sync-in-evaluation-loop"
    SUMMARY = "torch_xla.sync() at the end of evaluation loops under no_grad"
    FIX = SAFE
    TRIGGERS = (r"no_grad|inference_mode",)
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    CONTEXT = (BATCH_MOVE_CONTEXT,)
    BEFORE = "with torch.no_grad():\n    for x in batches:\n        total += model(x.to(device)).sum()\n"
    AFTER = (
        "with torch.no_grad():\n"
        "    for x in batches:\n"
        "        total += model(x.to(device)).sum()\n"
        "        torch_xla.sync()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.proof = BatchMoveProof(self)  # XLA302's own test of the loops it wraps
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
            and not calls_training_step(node.body)
            and self._runs_the_device(node.body)
            and not any(is_sync_statement(self, s) for s in subtree(node.body) if type(s) is cst.SimpleStatementLine)
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
        if id(original) in self.ctx.shared.get("sampling_loops", ()):
            return updated  # XLA705 cuts a sampling loop every token, and a sync at its end would cost a graph a token
        sync = cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression("torch_xla.sync()"))])
        body = updated.body.with_changes(body=[*updated.body.body, sync])
        return self.replace(
            original,
            updated,
            updated.with_changes(body=body),
            "`torch_xla.sync()` added at the end of the evaluation loop: one graph per batch",
            imports=[TORCH_XLA],
        )
