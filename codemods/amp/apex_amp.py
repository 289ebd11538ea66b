"""XLA408: NVIDIA apex's ``amp`` becomes what it does in bfloat16 on XLA (the migration guide's
"Automatic Mixed Precision"): no loss scaling, and bfloat16 autocast of the forward pass.

This module carries the plan out as the traversal leaves each node; what is decided about a
file is apex_plan.py's, what each piece becomes apex_conversions.py's."""

from __future__ import annotations

import libcst as cst

from codemods.amp.apex_conversions import (
    OPTIMIZER_PARAMETERS,
    bfloat16_autocast,
    same_names,
    scale_loss_statements,
    signature,
)
from codemods.amp.apex_plan import INITIALIZE, LOAD_STATE_DICT, MASTER_PARAMS, STATE_DICT, ApexPlan, ApexPlanner
from codemods.amp.common import NO_SCALING, amp_guide, atomic, device_imports, device_word, torch_module
from codemods.shared.apex_amp import APEX_AMP_HANDLED
from migrate_xla.rule.api import SAFE, Rule, call_arg, code_of, is_removed, parse_expr, snippet, words


class ApexAmp(Rule):
    """NVIDIA apex's ``amp`` becomes what it does without float16: no loss scaling, and
    bfloat16 autocast of the forward pass.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16, which keeps float32's
    exponent range and needs no loss scaling; apex, a CUDA extension, does not exist on an XLA
    device. What apex's calls do (apex/amp/handle.py, frontend.py, _amp_state.py), and what
    each becomes:

    - ``with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()`` yields
      ``loss.float() * loss_scale`` and unscales the gradients on exit (``loss`` itself when
      amp is disabled): the block stays, on ``loss`` (``loss.backward()``). ``delay_unscale``,
      ``loss_id`` and ``model`` only steer the scaling. A loss that is not a plain name
      (``loss / accum``) stands where the block reads its name once, and is bound to that name
      first where the block reads it more often, so that it is computed once; so is any loss
      whose names the block assigns (``loss = loss.detach()`` before the backward pass).
    - ``amp.master_params(optimizer)`` iterates ``p for group in optimizer.param_groups for p
      in group['params']``: that generator, written out (gradient clipping).
    - ``amp.state_dict()`` is the loss scalers' state: a checkpoint's ``"amp": amp.state_dict()``
      entry (or ``checkpoint["amp"] = amp.state_dict()`` line) goes, any other use is ``{}``, and
      ``amp.load_state_dict(...)`` is removed, so checkpoints saved before the migration still load.
    - ``model, optimizer = amp.initialize(model, optimizer, opt_level=...)`` returns its models
      and optimizers, cast and patched for the opt level: the line goes (``net, opt =
      amp.initialize(model, optimizer)`` becomes ``net, opt = model, optimizer``). O0 is float32
      and needs nothing more; ``enabled=False`` made every amp call a no-op. O1 (apex's
      default: torch functions patched to cast to float16) and O2 (a float16 model with float32
      master weights) are float16 forward passes: on XLA the forward pass that computes the
      loss each ``amp.scale_loss`` scales goes into ``with torch.autocast("xla",
      dtype=torch.bfloat16):`` (``"tpu"`` under ``--runtime torch-tpu``): the statements of its
      block from the first call of a model ``amp.initialize`` was given (by name, as the file
      spells it) to the last assignment of the loss, after any earlier backward pass or step.

    Flagged by name with what to do, and left as they are (apex is still imported for them):
    an ``amp.initialize`` whose opt level or ``enabled=`` is chosen at run time, that runs
    under a condition or more than once in the file, that overrides the precision
    (``cast_model_type``, ``patch_torch_functions``, ``cast_model_outputs``), that is O3 (the
    whole model in float16: ``model.to(torch.bfloat16)`` or autocast is a person's choice),
    or whose forward pass xla-migrate cannot find (computed in another function, a loss not
    assigned in the block of its ``scale_loss``). The rest of apex is XLA807's; the apex
    import goes once nothing uses it.
    """

    CODE = "XLA408"
    NAME = "apex-amp"
    SUMMARY = (
        "apex amp: scale_loss becomes loss.backward(), master_params the optimizer's parameters, "
        "amp.initialize bfloat16 autocast of the forward pass"
    )
    FIX = SAFE
    SEVERITY = "error"
    TRIGGERS = (words("apex"),)
    WHOLE_MODULE = True  # amp.initialize is in one function, the forward pass in another
    BEFORE = (
        "from apex import amp\n"
        'model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
        "for x, y in loader:\n"
        "    loss = criterion(model(x), y)\n"
        "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
        "        scaled_loss.backward()\n"
        "    optimizer.step()\n"
    )
    AFTER = (
        "for x, y in loader:\n"
        '    with torch.autocast("xla", dtype=torch.bfloat16):\n'
        "        loss = criterion(model(x), y)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = ApexPlanner(self.ctx, node).plan if "amp" in self.ctx.source else ApexPlan()
        self.expanded: dict[int, list[tuple]] = {}  # id(scale_loss With) -> what its statements became
        if self.plan.handled:
            self.ctx.shared.setdefault(APEX_AMP_HANDLED, set()).update(self.plan.handled)

    # -- amp.scale_loss -------------------------------------------------------------
    def leave_With(self, original: cst.With, updated: cst.With):
        call = self.plan.scale_loss.get(id(original))
        if call is None:
            return updated
        loss = call_arg(call, 0, "loss").value
        name = original.items[0].asname.name.value if original.items[0].asname is not None else None
        statements = scale_loss_statements(original, updated, loss, name)
        lines = "; ".join(" ".join(code_of(s.with_changes(leading_lines=[])).split()) for s in statements)
        replacement = cst.FlattenSentinel(statements)
        if self.fixes(original):  # what the block's forward pass is found among (_wrap)
            self.expanded[id(original)] = [signature(s) for s in statements]
        return self.replace(
            original,
            updated,
            replacement,
            f"`with {snippet(call)}{f' as {name}' if name else ''}:` -> `{lines}`: "
            f"apex scales the loss for float16 and unscales the gradients after the backward pass; {NO_SCALING}; "
            f"see {amp_guide(self.ctx)}",
            drop_if_unused=self.ctx.import_behind(call.func),
        )

    # -- amp.master_params, amp.state_dict ------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original.func) not in self.plan.handled:
            return updated
        name = self.qualname(original.func)
        if name in MASTER_PARAMS:
            optimizer = atomic(updated.args[0].value)
            replacement = parse_expr(OPTIMIZER_PARAMETERS.format(optimizer=code_of(optimizer)))
            return self.replace(
                original,
                updated,
                replacement,
                f"`{snippet(original)}` -> `{snippet(replacement)}`: apex's master parameters are the parameters of "
                f"the optimizer's groups (without float16 there are no float32 copies); see {amp_guide(self.ctx)}",
                drop_if_unused=self.ctx.import_behind(original.func),
            )
        if name in STATE_DICT and id(original) not in self.plan.handled:  # else its checkpoint entry or line goes
            return self.replace(
                original,
                updated,
                parse_expr("{}"),
                f"`{snippet(original)}` -> `{{}}`: apex's state is its loss scalers'; {NO_SCALING}",
                drop_if_unused=self.ctx.import_behind(original.func),
            )
        if name in INITIALIZE:
            why = self.plan.initialize.get(id(original))
            if why is not None:
                self.flag(original, why)
        return updated

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        doomed = [
            i
            for i, e in enumerate(original.elements)
            if isinstance(e, cst.DictElement) and id(e.value) in self.plan.handled
        ]
        if not doomed:
            return updated
        entries = ", ".join(
            f"{code_of(original.elements[i].key)}: {snippet(original.elements[i].value)}" for i in doomed
        )
        elements = [e for i, e in enumerate(updated.elements) if i not in doomed]
        if elements:
            elements[-1] = elements[-1].with_changes(comma=updated.elements[-1].comma)
        call = original.elements[doomed[0]].value
        return self.replace(
            original,
            updated,
            updated.with_changes(elements=elements),
            f"`{entries}` removed from the checkpoint: apex's state is its loss scalers'; {NO_SCALING}",
            drop_if_unused=self.ctx.import_behind(call.func),
        )

    # -- whole lines: amp.initialize, amp.load_state_dict, checkpoint["amp"] = amp.state_dict() --
    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        return self._line(original, updated)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        return self._line(original, updated)

    def _line(self, original, updated):
        call = original.value
        if not (isinstance(call, cst.Call) and id(call) in self.plan.handled and id(call.func) in self.plan.handled):
            return updated
        name = self.qualname(call.func)
        drops = self.ctx.import_behind(call.func)
        if name in INITIALIZE:  # one that goes: a flagged one is not in plan.handled
            return self._initialize(original, updated, call, drops)
        what = snippet(original)
        old = "; checkpoints saved with apex's state still load" if name in LOAD_STATE_DICT else ""
        return self.replace(
            original,
            updated,
            cst.RemoveFromParent(),
            f"`{what}` removed: apex's state is its loss scalers'{old}; {NO_SCALING}",
            drop_if_unused=drops,
        )

    def _initialize(self, original, updated, call: cst.Call, drops):
        level = self.plan.level[id(call)]
        now = updated.value  # the call as the rules before this one left its arguments
        values = [a.value for a in (call_arg(now, 0, "models"), call_arg(now, 1, "optimizers")) if a is not None]
        if level == "disabled":
            precision = "`enabled=False` made every amp call a no-op"
        elif level == "O0":
            precision = "O0 is float32"
        else:
            precision = f"{level} becomes {device_word(self.ctx)} autocast of the forward pass in bfloat16"
        why = (
            f"without apex it returns its models and optimizers as they are; {precision}; {NO_SCALING}; "
            f"see {amp_guide(self.ctx)}"
        )
        if isinstance(original, cst.Assign) and not same_names(original, values):
            value = values[0] if len(values) == 1 else cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
            replacement = updated.with_changes(value=value)
            return self.replace(
                original,
                updated,
                replacement,
                f"`{snippet(call)}` -> `{snippet(value)}`: {why}",
                drop_if_unused=drops,
            )
        return self.replace(
            original, updated, cst.RemoveFromParent(), f"`{snippet(original)}` removed: {why}", drop_if_unused=drops
        )

    # -- the forward pass of O1 / O2 ------------------------------------------------------
    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        return self._wrap(original, updated)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self._wrap(original, updated)

    def _wrap(self, original, updated):
        """Each forward pass of the block in ``with torch.autocast(...)``. The block's statements
        are found again by what they look like: one for each original statement, the statements
        a ``scale_loss`` block became for it, a removed line's placeholder for a line another
        rule removed. Where another fix changed the block otherwise, the forward pass is flagged."""
        forwards = self.plan.forwards.get(id(original))
        if not forwards:
            return updated
        expected: list[tuple] = []
        at: dict[int, int] = {}  # index in original.body -> index in updated.body
        for i, statement in enumerate(original.body[: max(f.last for f in forwards) + 1]):
            at[i] = len(expected)
            expected.extend(self.expanded.get(id(statement)) or [signature(statement)])
        found = [signature(s) for s in updated.body[: len(expected)]]
        aligned = len(found) == len(expected) and all(
            f == e or is_removed(s) for f, e, s in zip(found, expected, updated.body)
        )
        body = list(updated.body)
        for forward in sorted(forwards, key=lambda f: f.first, reverse=True):
            if not aligned:
                self.flag(
                    original.body[forward.first],
                    f"put the forward pass that computes `{forward.loss}` in `with {bfloat16_autocast(self.ctx)}:`: "
                    f"apex's amp.initialize, which this migration removed, made it a float16 forward pass "
                    f"(xla-migrate could not place the `with` here after the other fixes); see {amp_guide(self.ctx)}",
                )
                continue
            first, last = at[forward.first], at[forward.last]
            inner = [body[first].with_changes(leading_lines=[]), *body[first + 1 : last + 1]]
            wrapper = cst.With(
                items=[cst.WithItem(parse_expr(bfloat16_autocast(self.ctx)))],
                body=cst.IndentedBlock(body=inner),
                leading_lines=body[first].leading_lines,
            )
            _, imports = torch_module(self.ctx)
            marker = object()
            applied = self.replace(
                original.body[forward.first],
                marker,
                wrapper,
                f"the forward pass that computes `{forward.loss}` -> `with {bfloat16_autocast(self.ctx)}:`: apex's "
                f"amp.initialize made it a float16 forward pass; {device_word(self.ctx)} autocast computes in "
                f"bfloat16, which TPUs compute in natively; see {amp_guide(self.ctx)}",
                imports=[*device_imports(self.ctx), *imports],
            )
            if applied is not marker:
                body[first : last + 1] = [wrapper]
        return updated.with_changes(body=body)
