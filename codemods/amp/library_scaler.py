"""XLA407: the calls of timm's loss scalers (``NativeScaler``, ``ApexScaler``) become
what they do without loss scaling (the migration guide's "Automatic Mixed Precision")."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import NO_SCALING, amp_guide, atomic, torch_module
from codemods.shared.statements import call_of, carried_name
from migrate_xla.rule.api import ON_ACCELERATOR, SAFE, Import, Rule, code_of, parse_expr, snippet, string_value, words

TIMM_SCALERS = {
    f"timm.utils{module}.{name}": name for name in ("NativeScaler", "ApexScaler") for module in ("", ".cuda")
}
# timm's `__call__(loss, optimizer, clip_grad=None, clip_mode='norm', parameters=None,
# create_graph=False, need_update=True)`, in the order the arguments may be passed
SIGNATURE = ("loss", "optimizer", "clip_grad", "clip_mode", "parameters", "create_graph", "need_update")
OPTIMIZER_PARAMETERS = '[p for group in {optimizer}.param_groups for p in group["params"]]'


def _is_literal(node: cst.BaseExpression | None, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


class LibraryLossScaler(Rule):
    """A timm loss scaler's call becomes the backward pass, clipping and optimizer step it wraps.

    Guide, "Automatic Mixed Precision": bfloat16 needs no loss scaling, and XLA401 makes
    the autocast bfloat16. timm's ``NativeScaler`` wraps a CUDA ``GradScaler`` (on a
    machine without CUDA it is a disabled one) and ``ApexScaler`` wraps ``apex.amp``,
    which XLA has not; both are called in the training step as ``loss_scaler(loss,
    optimizer, clip_grad=..., clip_mode=..., parameters=..., create_graph=...,
    need_update=...)``, so the step has no ``optimizer.step()`` of its own and XLA201
    cannot put the step's ``torch_xla.sync()`` after it: the graph of every step piles onto
    the next. The call becomes what the scaler does unscaled: ``loss.backward(create_graph=
    ...)``, then, under ``if need_update:`` when that is passed, the clipping when
    ``clip_grad`` is not None (``torch.nn.utils.clip_grad_norm_`` for the default ``'norm'``
    mode, ``clip_grad_value_`` for ``'value'``, timm's ``dispatch_clip_grad(..., mode=...)``
    for a mode chosen at run time; ApexScaler clips the optimizer's parameters, which
    stand in for ``parameters`` when it is not passed) and ``optimizer.step()``; XLA201 then
    adds the sync (PyTorch/XLA; TorchTPU runs eagerly and needs none). The scaler object stays (checkpoints save its state); unscaled, it is
    never called.

    Converted where the call is known to be timm's: the name it is called through was
    assigned a ``NativeScaler()`` / ``ApexScaler()`` above the call, or the file imports one
    of them from ``timm.utils`` (timm's own train.py makes the scaler in ``main()``, below the
    ``train_one_epoch()`` that calls it). A scaler-named callable called the same way in a file that
    does neither (DeiT's ``engine.py`` gets ``loss_scaler`` from ``main.py``) is flagged with
    the lines to write instead.
    """

    CODE = "XLA407"
    NAME = "library-loss-scaler"
    SUMMARY = "timm's NativeScaler / ApexScaler calls become loss.backward(), clipping and optimizer.step()"
    FIX = SAFE
    SEVERITY = "warning"
    TRIGGERS = (words("NativeScaler", "ApexScaler"), r"scaler\(|Scaler\(")  # literals: found with `in`
    REQUIRES = (ON_ACCELERATOR,)
    CONTEXT = (words("NativeScaler", "ApexScaler"),)
    BEFORE = (
        "from timm.utils import NativeScaler\n"
        "loss_scaler = NativeScaler()\n"
        "loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters())\n"
    )
    AFTER = (
        "from timm.utils import NativeScaler\n"
        "loss_scaler = NativeScaler()\n"
        "loss.backward()\n"
        "if max_norm is not None:\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "optimizer.step()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.bound: set[str] = set()  # names assigned a timm scaler in this file

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and self.qualname(node.value.func) in TIMM_SCALERS:
            self.bound.update(key for key in (carried_name(t.target) for t in node.targets) if key is not None)

    def _known(self, key: str) -> bool:
        return key in self.bound or any(name in TIMM_SCALERS for name in self.ctx.aliases.values())

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = call_of(original)
        key = carried_name(call.func) if call is not None else None
        if key is None or (key not in self.bound and "scaler" not in key.rsplit(".", 1)[-1].lower()):
            return updated
        now = call_of(updated)  # the call as the rules before this one left it
        args = self._arguments(now) if now is not None else None
        if args is None:
            return updated
        statements = self._unscaled(args)
        lines = "; ".join(" ".join(code_of(s).split()) for s in statements)
        if not self._known(key):
            # PyTorch/XLA's step ends in a sync (XLA201) after the optimizer step; TorchTPU is eager
            sync = ", and xla-migrate then adds the step's `torch_xla.sync()`" if self.ctx.api.lazy else ""
            self.flag(
                original,
                f"`{snippet(call)}` looks like a timm loss scaler (`NativeScaler`, `ApexScaler`), which scales "
                f"the loss for float16 and steps the optimizer itself: {NO_SCALING}, so write what it does "
                f"unscaled, `{lines}`{sync}; see {amp_guide(self.ctx)}",
            )
            return updated
        _, imports = torch_module(self.ctx)
        if "dispatch_clip_grad(" in lines:
            imports = [*imports, Import("timm.utils", "dispatch_clip_grad")]
        message = f"`{snippet(call)}` -> `{lines}`: the loss scaler's work without loss scaling: {NO_SCALING}"
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        end = -1 if isinstance(statements[-1], cst.SimpleStatementLine) else 0  # a trailing comment stays on a line
        statements[end] = statements[end].with_changes(trailing_whitespace=updated.trailing_whitespace)
        sentinel = cst.FlattenSentinel(statements)
        if self.replace(original, updated, sentinel, message, imports=imports) is not sentinel:
            return updated
        statements[0] = self.ctx.attach_todos(original, statements[0])  # the runner does it for one statement only
        return cst.FlattenSentinel(statements)

    def _arguments(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        """The arguments of a timm scaler's call, by parameter name; None for any other call."""
        found: dict[str, cst.BaseExpression] = {}
        for position, arg in enumerate(call.args):
            if arg.star:
                return None
            if arg.keyword is None:
                if found.keys() - set(SIGNATURE[:position]) or position >= len(SIGNATURE):
                    return None
                found[SIGNATURE[position]] = arg.value
            elif arg.keyword.value in SIGNATURE and arg.keyword.value not in found:
                found[arg.keyword.value] = arg.value
            else:
                return None
        if "loss" not in found or "optimizer" not in found:
            return None
        if len(found) == 2 and not isinstance(found["optimizer"], (cst.Name, cst.Attribute)):
            return None
        return found

    def _unscaled(self, args: dict[str, cst.BaseExpression]) -> list[cst.BaseStatement]:
        """``loss.backward()``, the clipping and ``optimizer.step()``, as timm's scaler orders them."""
        torch, _ = torch_module(self.ctx)
        loss, optimizer = atomic(args["loss"]), atomic(args["optimizer"])
        backward = f"{code_of(loss)}.backward()"
        if "create_graph" in args and not _is_literal(args["create_graph"], "False"):
            backward = f"{code_of(loss)}.backward(create_graph={code_of(args['create_graph'])})"
        update: list[cst.BaseStatement] = []
        clip = args.get("clip_grad")
        if clip is not None and not _is_literal(clip, "None"):
            clip_code = code_of(clip)
            parameters = args.get("parameters")
            params = (
                code_of(parameters)
                if parameters is not None
                else OPTIMIZER_PARAMETERS.format(optimizer=code_of(optimizer))
            )
            mode = args.get("clip_mode")
            mode_value = "norm" if mode is None else string_value(mode)
            if mode_value == "norm":
                clipping = f"{torch}.nn.utils.clip_grad_norm_({params}, {clip_code})"
            elif mode_value == "value":
                clipping = f"{torch}.nn.utils.clip_grad_value_({params}, {clip_code})"
            else:
                clipping = f"dispatch_clip_grad({params}, {clip_code}, mode={code_of(mode)})"
            line = _line(clipping)
            if isinstance(clip, (cst.Integer, cst.Float)):
                update.append(line)
            else:
                update.append(cst.If(test=parse_expr(f"{code_of(atomic(clip))} is not None"), body=_block(line)))
        update.append(_line(f"{code_of(optimizer)}.step()"))
        need = args.get("need_update")
        if need is None or _is_literal(need, "True"):
            return [_line(backward), *update]
        if _is_literal(need, "False"):
            return [_line(backward)]
        return [_line(backward), cst.If(test=need, body=_block(*update))]


def _line(code: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(parse_expr(code))])


def _block(*statements: cst.BaseStatement) -> cst.IndentedBlock:
    return cst.IndentedBlock(body=list(statements))
