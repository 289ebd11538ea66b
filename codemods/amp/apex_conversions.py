"""What apex's amp calls and blocks become without it (apex_amp.py, XLA408, applies them):
a ``with amp.scale_loss(loss, ...) as scaled_loss:`` block its statements on ``loss``,
``amp.master_params(optimizer)`` the optimizer's parameters, a forward pass bfloat16
autocast; and how a statement is known again after the other rules rewrote inside it."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import atomic, torch_module
from codemods.shared.statements import unwrap_block
from codemods.shared.walk import is_reference
from migrate_xla.rule.api import FileContext, code_of, subtree

OPTIMIZER_PARAMETERS = '(p for group in {optimizer}.param_groups for p in group["params"])'


def bfloat16_autocast(ctx: FileContext) -> str:
    """``torch.autocast("xla", dtype=torch.bfloat16)`` on the run's device, as the file spells torch."""
    torch, _ = torch_module(ctx)
    return f'{torch}.autocast("{ctx.api.device_type}", dtype={torch}.bfloat16)'


def scale_loss_statements(original: cst.With, updated: cst.With, loss: cst.BaseExpression, name: str | None) -> list:
    """The statements ``with amp.scale_loss(loss, ...) as name:`` becomes: its block, with ``loss``
    read where it read ``name`` (bound to ``name`` first where that would compute it again)."""
    statements, above = unwrap_block(updated)
    if name is not None and name != code_of(loss):
        plain = isinstance(loss, (cst.Name, cst.Attribute))  # evaluating it again does nothing
        # the block rebinds neither its name nor a name the loss reads (loss = loss.detach())
        steady = not any(rebinds(original.body, n) for n in {name, *names_in(loss)})
        if steady and (plain or read_once(original.body, name)):
            renamer = Rename(name, atomic(loss))
            statements = [s.visit(renamer) for s in statements]
        else:  # computed once, as apex computes it
            bind = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=loss)
            statements.insert(0, cst.SimpleStatementLine(body=[bind]))
    statements[0] = statements[0].with_changes(leading_lines=[*above, *statements[0].leading_lines])
    return statements


def signature(statement: cst.CSTNode) -> tuple:
    """What a statement looks like whatever the other rules rewrote inside it: its kind, and
    for a line the kinds of its statements and the names it assigns."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return (type(statement).__name__,)
    return tuple(
        (type(small).__name__, tuple(code_of(t.target) for t in getattr(small, "targets", ())))
        for small in statement.body
    )


def same_names(assign: cst.Assign, values: list[cst.BaseExpression]) -> bool:
    """``model, optimizer = amp.initialize(model, optimizer)``: the names it assigns are its arguments."""
    if len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    targets = parts(target)
    if len(values) == 1:
        return code_of(target) == code_of(values[0])
    return len(targets) == len(values) and all(code_of(t) == code_of(v) for t, v in zip(targets, values))


def parts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The elements of a tuple or list (``model, optimizer``), else ``node`` itself."""
    return [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]


def names_in(node: cst.CSTNode) -> set[str]:
    """The names in ``node`` (``loss``, ``accum`` in ``loss / accum``; ``self`` and ``loss`` in ``self.loss``)."""
    return {n.value for n in subtree(node) if isinstance(n, cst.Name)}


def rebinds(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is assigned, deleted or bound in ``node``."""
    for inner in subtree(node):
        targets = []
        if isinstance(inner, cst.Assign):
            targets = [t.target for t in inner.targets]
        elif isinstance(inner, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor)):
            targets = [inner.target]
        elif isinstance(inner, (cst.AsName, cst.Del, cst.NamedExpr)):
            targets = [getattr(inner, "name", None) or getattr(inner, "target", None)]
        elif isinstance(inner, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return True  # a nested scope: left as it is written
        if any(isinstance(n, cst.Name) and n.value == name for t in targets if t is not None for n in subtree(t)):
            return True
    return False


def read_once(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is read once in ``node``, outside any loop: ``scaled_loss.backward()``."""
    reads = 0
    for inner in subtree(node):
        if isinstance(inner, (cst.For, cst.While, cst.CompFor)):
            return False
        reads += isinstance(inner, cst.Name) and inner.value == name
    return reads == 1


class Rename(cst.CSTTransformer):
    """Every reference to ``name`` becomes ``value`` (``scaled_loss`` -> ``loss``)."""

    def __init__(self, name: str, value: cst.BaseExpression) -> None:
        super().__init__()
        self.name, self.value, self.parents = name, value, []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.parents.append(node)
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        self.parents.pop()
        parent = self.parents[-1] if self.parents else None
        if isinstance(original, cst.Name) and original.value == self.name and is_reference(original, parent):
            return self.value
        return updated
