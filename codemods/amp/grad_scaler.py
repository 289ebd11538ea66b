"""XLA402-XLA404: the GradScaler (the migration guide's "Automatic Mixed Precision").

XLA402 removes a CUDA GradScaler made in the file and rewrites its calls as a disabled
scaler behaves; XLA403 does the same for a scaler made elsewhere (unsafe, matched by
shape); XLA404 swaps in the sync-free optimizers where a scaler stays (unsafe). All three
read the analysis of scaler_analysis.py."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import (
    AMP_GUIDE,
    CUDA_SCALER,
    NO_SCALING,
    amp_guide,
    arg_index,
    atomic,
    device_imports,
    device_word,
    torch_module,
)
from codemods.amp.scaler_analysis import Scaler, ScalerUses, scaler_uses
from migrate_xla.rule.api import SAFE, UNSAFE, Import, Rule, code_of, drop_items, parse_expr, snippet


class _ScalerAware(Rule):
    """Runs the shared analysis when the traversal meets the first name that can be a
    scaler's (``scaler``, ``self.grad_scaler``, ``GradScaler`` however imported): files
    without one never pay for the walk."""

    uses: ScalerUses | None = None
    WHOLE_MODULE = True  # a scaler is made in one function and used in others

    def visit_Module(self, node: cst.Module) -> None:
        self.module, self.uses = node, None

    def _analyse_at(self, node: cst.CSTNode) -> None:
        if self.uses is None:
            self.uses = scaler_uses(self.ctx, self.module, node)

    def visit_Name(self, node: cst.Name) -> None:
        if self.uses is None and (
            "scaler" in node.value.lower() or self.ctx.aliases.get(node.value, "").endswith("GradScaler")
        ):
            self._analyse_at(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.uses is None and "scaler" in node.attr.value.lower():
            self._analyse_at(node)


class _ScalerRewrite(_ScalerAware):
    """Rewrites the uses of the scalers a rule owns the way a disabled GradScaler behaves:
    ``scale(loss)`` is ``loss``, ``step(opt)`` is ``opt.step()``, ``unscale_``, ``update``
    and ``load_state_dict`` do nothing, ``get_scale()`` is 1.0 and ``state_dict()`` is
    empty (a checkpoint's scaler entry goes). ``is_enabled()`` is not rewritten: code
    that reads it (``autocast(enabled=scaler.is_enabled())``) means "mixed precision
    is on", not "the loss is scaled", so such a scaler stays."""

    GUESS = ""  # added to every message

    def owns(self, scaler: Scaler) -> bool:
        raise NotImplementedError

    def _owned(self, node: cst.CSTNode) -> str | None:
        if self.uses is None:
            return None
        found = self.uses.actions.get(id(node))
        return found[1] if found is not None and self.owns(found[0]) else None

    def _rewrite(self, original, updated, replacement, message: str, **imports):
        return self.replace(original, updated, replacement, f"{message}: {NO_SCALING}{self.GUESS}", **imports)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.uses is None:
            return updated
        what = self._owned(original)
        if what is None and any(self._owned(a) == "drop-arg" for a in original.args):
            doomed = {id(u) for o, u in zip(original.args, updated.args) if self._owned(o) == "drop-arg"}
            names = ", ".join(f"`{code_of(o.value)}`" for o in original.args if self._owned(o) == "drop-arg")
            replacement = updated.with_changes(args=drop_items(updated.args, lambda a: id(a) in doomed))
            return self._rewrite(
                original, updated, replacement, f"{names} no longer passed to `{code_of(original.func)}()`"
            )
        if what == "unwrap":
            value = updated.args[0].value
            return self._rewrite(original, updated, atomic(value), f"`{snippet(original)}` -> `{snippet(value)}`")
        if what == "step":
            optimizer = updated.args[0].value
            rest = list(updated.args[1:])
            replacement = cst.Call(cst.Attribute(atomic(optimizer), cst.Name("step")), rest)
            return self._rewrite(original, updated, replacement, f"`{snippet(original)}` -> `{code_of(replacement)}`")
        constant = {"get_scale": "1.0", "state_dict": "{}"}.get(what or "")
        if constant is not None:
            return self._rewrite(
                original,
                updated,
                parse_expr(constant),
                f"`{snippet(original)}` -> `{constant}`, what a disabled GradScaler returns",
            )
        return updated

    def _remove(self, original, updated):
        if self._owned(original) != "remove":
            return updated
        what = snippet(original.value if isinstance(original, cst.Expr) else original)
        old = "; checkpoints saved with a scaler still load" if "load_state_dict" in what else ""
        return self._rewrite(original, updated, cst.RemoveFromParent(), f"`{what}` removed{old}")

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        return self._remove(original, updated)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        return self._remove(original, updated)

    def leave_Parameters(self, original: cst.Parameters, updated: cst.Parameters):
        if self.uses is None:
            return updated
        changes = {}
        for name in ("posonly_params", "params", "kwonly_params"):
            pairs = list(zip(getattr(original, name), getattr(updated, name)))
            doomed = {id(u) for o, u in pairs if self._owned(o) == "drop-param"}
            if doomed:
                changes[name] = drop_items(getattr(updated, name), lambda p, doomed=doomed: id(p) in doomed)
                gone = ", ".join(f"`{o.name.value}`" for o, u in pairs if id(u) in doomed)
        if not changes:
            return updated
        return self._rewrite(
            original, updated, updated.with_changes(**changes), f"parameter {gone} removed, with its GradScaler"
        )

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if self.uses is None:
            return updated
        doomed = {id(u) for o, u in zip(original.elements, updated.elements) if self._owned(o) == "drop"}
        if not doomed:
            return updated
        entries = ", ".join(
            f"{code_of(o.key)}: {snippet(o.value)}"
            for o, u in zip(original.elements, updated.elements)
            if id(u) in doomed
        )
        replacement = updated.with_changes(elements=drop_items(updated.elements, lambda e: id(e) in doomed))
        return self._rewrite(original, updated, replacement, f"`{entries}` removed from the checkpoint")


class GradScalerRemoved(_ScalerRewrite):
    """A CUDA GradScaler goes, and its calls become what they mean without one.

    Guide, "Automatic Mixed Precision": bfloat16 "typically doesn't require loss
    scaling": it has float32's exponent range, so small gradients do not underflow the
    way they do in float16. XLA401 makes every CUDA autocast bfloat16, so a scaler made
    in this file (``torch.cuda.amp.GradScaler()``, ``torch.amp.GradScaler("cuda")``,
    ``enabled=`` from a config) is removed with its calls, rewritten as a disabled scaler
    behaves: ``scaler.scale(loss).backward()`` -> ``loss.backward()``, ``unscale_`` and
    ``update`` go (gradient clipping after ``unscale_`` stays), ``scaler.step(opt)`` ->
    ``opt.step()`` (XLA201 then puts the sync after it). Checkpoints: a ``"scaler":
    scaler.state_dict()`` entry goes and ``scaler.load_state_dict(...)`` is removed, so
    checkpoints written before the migration still load. A scaler passed to a function
    of this file that uses it only in these ways (``train(model, loader, scaler)``) goes
    with that parameter and the argument at every call. A scaler used any other way
    (passed elsewhere, tested for None, ``is_enabled()``) is kept, moved to the XLA
    device (``"tpu"`` under ``--runtime torch-tpu``) and flagged.
    """

    CODE = "XLA402"
    NAME = "grad-scaler"
    SUMMARY = "a CUDA GradScaler and its calls go: bfloat16 needs no loss scaling"
    FIX = SAFE
    TRIGGERS = (r"GradScaler",)
    BEFORE = (
        "scaler = torch.cuda.amp.GradScaler()\nscaler.scale(loss).backward()\nscaler.unscale_(optimizer)\n"
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(optimizer)\nscaler.update()\n"
    )
    AFTER = "loss.backward()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\noptimizer.step()\n"

    def owns(self, scaler: Scaler) -> bool:
        return scaler.removable

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.uses is None or id(original) not in self.uses.constructors:
            return super().leave_Call(original, updated)
        scaler = self.uses.constructors[id(original)]
        if scaler is not None and scaler.removable:
            return updated  # the whole assignment goes in leave_Assign
        torch, imports = torch_module(self.ctx)
        device = f'"{self.ctx.api.device_type}"'
        if self.qualname(original.func) in CUDA_SCALER:
            args = [cst.Arg(cst.SimpleString(device)), *updated.args]
        else:
            index = arg_index(original, 0, "device")
            args = list(updated.args)
            if index is None:
                args.insert(0, cst.Arg(cst.SimpleString(device)))
            else:
                args[index] = args[index].with_changes(value=cst.SimpleString(device))
        replacement = updated.with_changes(func=parse_expr(f"{torch}.amp.GradScaler"), args=args)
        if scaler is not None:
            use = snippet(scaler.odd[0])
            why = f"`{scaler.key}` is also used in a way xla-migrate does not convert (`{use}`)"
            if scaler.late:
                why = f"`{scaler.key}` is used above the first line that names a GradScaler (`{use}`)"
        else:
            why = "this GradScaler is not assigned to a name xla-migrate can follow"
        self.flag(
            original,
            f"{why}, so it stays, on the {device_word(self.ctx)} device; {NO_SCALING}: remove it and write "
            "`loss.backward()` and `optimizer.step()` for its calls; see " + amp_guide(self.ctx),
        )
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{code_of(replacement)}`",
            imports=[*device_imports(self.ctx), *imports],
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        return self._binding(original, updated) or super().leave_Assign(original, updated)

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        return self._binding(original, updated) or updated

    def _binding(self, original, updated):
        call = original.value
        scaler = self.uses.constructors.get(id(call)) if isinstance(call, cst.Call) and self.uses else None
        if scaler is None or not scaler.removable:
            return None
        return self._rewrite(
            original,
            updated,
            cst.RemoveFromParent(),
            f"`{snippet(original)}` removed",
            drop_if_unused=self.ctx.import_behind(call.func),
        )


class GradScalerCall(_ScalerRewrite):
    """Calls on a value that looks like a GradScaler but is made elsewhere are unscaled too.

    A training step often gets its scaler as an argument (``def train(model, loader,
    optimizer, scaler)``). Matched by shape: a name ending in ``scaler`` that the step
    uses as ``scaler.scale(loss).backward()`` or ``scaler.step(optimizer)``; its calls are
    rewritten as XLA402 rewrites them, the parameter stays (its GradScaler is removed
    where it is made, or flagged). Unsafe: the rule guesses that the value is a
    GradScaler, and that the autocast it goes with becomes bfloat16.
    """

    CODE = "XLA403"
    NAME = "grad-scaler-call"
    SUMMARY = "scaler.scale(loss) / scaler.step(opt) on a scaler made elsewhere become loss / opt.step()"
    FIX = UNSAFE
    TRIGGERS = (r"scaler\.scale\(|scaler\.step\(|Scaler\.scale\(|Scaler\.step\(",)  # literals: found with `in`
    GUESS = " (matched by shape: taken for a GradScaler made elsewhere)"
    BEFORE = (
        "def train_step(model, x, optimizer, scaler):\n    loss = model(x).sum()\n"
        "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n"
    )
    AFTER = "def train_step(model, x, optimizer, scaler):\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"

    def owns(self, scaler: Scaler) -> bool:
        return not scaler.devices and scaler.shaped


SYNCFREE = {
    f"torch.optim{module}.{name}": name for name in ("SGD", "Adam", "AdamW") for module in ("", f".{name.lower()}")
}


class SyncFreeOptimizer(_ScalerAware):
    """Where a GradScaler has to stay, the optimizer becomes the guide's sync-free variant.

    Guide, "Automatic Mixed Precision": "PyTorch/XLA provides sync-free optimizers for
    improved performance" (``torch_xla.amp.syncfree.SGD``, ``Adam``, ``AdamW``): they take
    the scaler's ``found_inf`` as a device tensor and skip the update on the device
    instead of reading the flag on the host. Offered only in files where a GradScaler
    stays (XLA402 kept and flagged it): without a scaler there is nothing to skip.
    Unsafe: torch 2.9's ``GradScaler.step`` does not pass ``found_inf`` to an optimizer
    (it still reads it on the host, then calls ``step()``), so the sync goes away only
    once the step is written as ``optimizer.step(found_inf=...)``; the syncfree classes
    are drop-in subclasses of torch's, so the swap itself changes no result. PyTorch/XLA
    only: TorchTPU has no sync-free optimizers (``torch.tpu.optimizers`` is another API),
    and its GradScalers are kept only where XLA402 cannot remove them.
    """

    CODE = "XLA404"
    NAME = "syncfree-optimizer"
    SUMMARY = "SGD/Adam/AdamW become torch_xla.amp.syncfree's where a GradScaler stays"
    FIX = UNSAFE
    TRIGGERS = (r"GradScaler",)
    RUNTIMES = ("torch-xla",)
    BEFORE = (
        "from torch_xla.amp import syncfree\noptimizer = torch.optim.AdamW(model.parameters())\n"
        'scaler = torch.amp.GradScaler("xla")\ntrain(model, optimizer, scaler)\n'
    )
    AFTER = (
        "from torch_xla.amp import syncfree\noptimizer = syncfree.AdamW(model.parameters())\n"
        'scaler = torch.amp.GradScaler("xla")\ntrain(model, optimizer, scaler)\n'
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.uses is None and self.qualname(node.func) in SYNCFREE:
            self._analyse_at(node)  # the optimizer usually comes before its scaler

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name not in SYNCFREE or self.uses is None or not self.uses.scaler_stays:
            return updated
        replacement = updated.with_changes(func=parse_expr(f"syncfree.{SYNCFREE[name]}"))
        return self.replace(
            original,
            updated,
            replacement,
            f"`{code_of(original.func)}` -> `syncfree.{SYNCFREE[name]}`: a GradScaler stays in this file, "
            f"and the sync-free optimizers can skip its inf/nan steps on the device; see {AMP_GUIDE}",
            imports=[Import("torch_xla.amp", "syncfree")],
            drop_if_unused=self.ctx.import_behind(original.func),
        )
