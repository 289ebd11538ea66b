"""XLA408: NVIDIA apex's ``amp`` becomes what it does in bfloat16 on XLA (the migration guide's
"Automatic Mixed Precision"): no loss scaling, and bfloat16 autocast of the forward pass."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.amp.common import (
    CUDA_AUTOCAST,
    DEVICE_AUTOCAST,
    NO_SCALING,
    amp_guide,
    atomic,
    device_imports,
    device_word,
    torch_module,
)
from codemods.amp.walk import is_reference
from codemods.shared.apex_amp import APEX_AMP_HANDLED
from codemods.shared.statements import carried_name
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule import (
    SAFE,
    FileContext,
    Rule,
    call_arg,
    children,
    code_of,
    is_removed,
    parse_expr,
    snippet,
    string_value,
    subtree,
    words,
)


def _apex(*names: str) -> frozenset[str]:
    """``apex.amp.X`` and where apex defines it (``apex/amp/__init__.py`` re-exports them)."""
    return frozenset(
        f"apex.amp{module}.{name}" for name in names for module in ("", ".frontend", ".handle", "._amp_state")
    )


INITIALIZE = _apex("initialize")
SCALE_LOSS = _apex("scale_loss")
MASTER_PARAMS = _apex("master_params")
STATE_DICT = _apex("state_dict")
LOAD_STATE_DICT = _apex("load_state_dict")
# apex.amp.frontend.initialize(models, optimizers=None, enabled=True, opt_level="O1", cast_model_type=None,
# patch_torch_functions=None, keep_batchnorm_fp32=None, master_weights=None, loss_scale=None,
# cast_model_outputs=None, num_losses=1, verbosity=1, min_loss_scale=None, max_loss_scale=2.**24)
INITIALIZE_PARAMETERS = (
    "models",
    "optimizers",
    "enabled",
    "opt_level",
    "cast_model_type",
    "patch_torch_functions",
    "keep_batchnorm_fp32",
    "master_weights",
    "loss_scale",
    "cast_model_outputs",
    "num_losses",
    "verbosity",
    "min_loss_scale",
    "max_loss_scale",
)
# What an opt level's own precision override changes beyond "float16 autocast": a person decides
PRECISION_OVERRIDES = ("cast_model_type", "patch_torch_functions", "cast_model_outputs")
OPTIMIZER_PARAMETERS = '(p for group in {optimizer}.param_groups for p in group["params"])'
# Statements under which a statement does not always run, up to its function
_CONDITIONAL = (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.Finally, cst.While, cst.For, cst.IfExp)


@dataclass
class _Forward:
    """The statements of a block that compute a loss ``amp.scale_loss`` scales: ``block.body[first:last + 1]``."""

    block: cst.CSTNode
    first: int
    last: int
    loss: str
    wrap: bool = False  # not already in autocast: it goes into one


@dataclass
class _Plan:
    """What XLA408 does in one file, decided before the traversal (the forward pass is usually
    below ``amp.initialize``, in another function)."""

    handled: set[int] = field(default_factory=set)  # ids of the apex references this rule answers for
    scale_loss: dict[int, cst.Call] = field(default_factory=dict)  # id(With) -> its scale_loss call
    initialize: dict[int, str] = field(default_factory=dict)  # id(amp.initialize call) -> why it stays (flagged)
    forwards: dict[int, list[_Forward]] = field(default_factory=dict)  # id(block) -> the forwards to wrap
    level: dict[int, str] = field(default_factory=dict)  # id(initialize call) -> its opt level, for messages


def _signature(statement: cst.CSTNode) -> tuple:
    """What a statement looks like whatever the other rules rewrote inside it: its kind, and
    for a line the kinds of its statements and the names it assigns."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return (type(statement).__name__,)
    return tuple(
        (type(small).__name__, tuple(code_of(t.target) for t in getattr(small, "targets", ())))
        for small in statement.body
    )


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
        self.plan = _Planner(self, node).plan if "amp" in self.ctx.source else _Plan()
        self.expanded: dict[int, list[tuple]] = {}  # id(scale_loss With) -> what its statements became
        if self.plan.handled:
            self.ctx.shared.setdefault(APEX_AMP_HANDLED, set()).update(self.plan.handled)

    def _autocast(self) -> str:
        torch, _ = torch_module(self.ctx)
        return f'{torch}.autocast("{self.ctx.api.device_type}", dtype={torch}.bfloat16)'

    # -- amp.scale_loss -------------------------------------------------------------
    def leave_With(self, original: cst.With, updated: cst.With):
        call = self.plan.scale_loss.get(id(original))
        if call is None:
            return updated
        loss = call_arg(call, 0, "loss").value
        name = original.items[0].asname.name.value if original.items[0].asname is not None else None
        body = updated.body
        if isinstance(body, cst.SimpleStatementSuite):
            statements: list[cst.BaseStatement] = [cst.SimpleStatementLine(body=body.body)]
        else:
            statements = list(body.body)
        above = list(updated.leading_lines)
        if isinstance(body, cst.IndentedBlock) and body.header.comment is not None:  # with ...:  # comment
            above.append(cst.EmptyLine(comment=body.header.comment))
        if name is not None and name != code_of(loss):
            plain = isinstance(loss, (cst.Name, cst.Attribute))  # evaluating it again does nothing
            # the block rebinds neither its name nor a name the loss reads (loss = loss.detach())
            steady = not any(_rebinds(original.body, n) for n in {name, *_names_in(loss)})
            if steady and (plain or _read_once(original.body, name)):
                renamer = _Rename(name, atomic(loss))
                statements = [s.visit(renamer) for s in statements]
            else:  # computed once, as apex computes it
                bind = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=loss)
                statements.insert(0, cst.SimpleStatementLine(body=[bind]))
        lines = "; ".join(" ".join(code_of(s.with_changes(leading_lines=[])).split()) for s in statements)
        statements[0] = statements[0].with_changes(leading_lines=[*above, *statements[0].leading_lines])
        replacement = cst.FlattenSentinel(statements)
        if self.fixes(original):  # what the block's forward pass is found among (_wrap)
            self.expanded[id(original)] = [_signature(s) for s in statements]
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
        if isinstance(original, cst.Assign) and not _same(original, values):
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
            expected.extend(self.expanded.get(id(statement)) or [_signature(statement)])
        found = [_signature(s) for s in updated.body[: len(expected)]]
        aligned = len(found) == len(expected) and all(
            f == e or is_removed(s) for f, e, s in zip(found, expected, updated.body)
        )
        body = list(updated.body)
        for forward in sorted(forwards, key=lambda f: f.first, reverse=True):
            if not aligned:
                self.flag(
                    original.body[forward.first],
                    f"put the forward pass that computes `{forward.loss}` in `with {self._autocast()}:`: "
                    f"apex's amp.initialize, which this migration removed, made it a float16 forward pass "
                    f"(xla-migrate could not place the `with` here after the other fixes); see {amp_guide(self.ctx)}",
                )
                continue
            first, last = at[forward.first], at[forward.last]
            inner = [body[first].with_changes(leading_lines=[]), *body[first + 1 : last + 1]]
            wrapper = cst.With(
                items=[cst.WithItem(parse_expr(self._autocast()))],
                body=cst.IndentedBlock(body=inner),
                leading_lines=body[first].leading_lines,
            )
            _, imports = torch_module(self.ctx)
            marker = object()
            applied = self.replace(
                original.body[forward.first],
                marker,
                wrapper,
                f"the forward pass that computes `{forward.loss}` -> `with {self._autocast()}:`: apex's "
                f"amp.initialize made it a float16 forward pass; {device_word(self.ctx)} autocast computes in "
                f"bfloat16, which TPUs compute in natively; see {amp_guide(self.ctx)}",
                imports=[*device_imports(self.ctx), *imports],
            )
            if applied is not marker:
                body[first : last + 1] = [wrapper]
        return updated.with_changes(body=body)


def _same(assign: cst.Assign, values: list[cst.BaseExpression]) -> bool:
    """``model, optimizer = amp.initialize(model, optimizer)``: the names it assigns are its arguments."""
    if len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    targets = _parts(target)
    if len(values) == 1:
        return code_of(target) == code_of(values[0])
    return len(targets) == len(values) and all(code_of(t) == code_of(v) for t, v in zip(targets, values))


def _parts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The elements of a tuple or list (``model, optimizer``), else ``node`` itself."""
    return [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]


def _names_in(node: cst.CSTNode) -> set[str]:
    """The names in ``node`` (``loss``, ``accum`` in ``loss / accum``; ``self`` and ``loss`` in ``self.loss``)."""
    return {n.value for n in subtree(node) if isinstance(n, cst.Name)}


def _rebinds(node: cst.CSTNode, name: str) -> bool:
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


def _read_once(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is read once in ``node``, outside any loop: ``scaled_loss.backward()``."""
    reads = 0
    for inner in subtree(node):
        if isinstance(inner, (cst.For, cst.While, cst.CompFor)):
            return False
        reads += isinstance(inner, cst.Name) and inner.value == name
    return reads == 1


class _Rename(cst.CSTTransformer):
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


def _paths(root: cst.CSTNode):
    """Every node under ``root`` in code order with all its ancestors, nearest first."""
    stack: list[tuple[cst.CSTNode, tuple]] = [(root, ())]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        inner = (node, *ancestors)
        stack.extend((child, inner) for child in reversed(children(node)))


class _Planner:
    """Reads the file once, before the traversal: the apex calls, the forward passes, the plan."""

    def __init__(self, rule: ApexAmp, module: cst.Module) -> None:
        self.rule, self.plan = rule, _Plan()
        self.names = FileContext()  # the traversal has not learned the imports yet
        initializes, withs = self._find(module)
        for with_, call, _ in withs:
            self.plan.scale_loss[id(with_)] = call
            self.plan.handled.add(id(call.func))
        self.scale_loss_withs = {id(w) for w, _, _ in withs}
        self.models = {key for call, ancestors in initializes for key in self._models(call, ancestors)}
        forwards = [self._forward(with_, call, ancestors) for with_, call, ancestors in withs]
        for call, ancestors in initializes:
            self.plan.handled.add(id(call.func))  # converted, or flagged by this rule
            why = self._initialize(call, ancestors, len(initializes), forwards)
            if why is None:
                self.plan.handled.add(id(call))
                for forward in forwards if self.plan.level[id(call)] in ("O1", "O2") else ():
                    if forward is not None and forward.wrap:
                        self.plan.forwards.setdefault(id(forward.block), []).append(forward)
            else:
                self.plan.initialize[id(call)] = why

    def _find(self, module: cst.Module) -> tuple[list, list]:
        """The file's ``amp.initialize`` calls and ``with amp.scale_loss(...)`` statements XLA408
        converts, each with its ancestors; the other apex calls it answers for go in ``plan.handled``."""
        initializes: list[tuple[cst.Call, tuple]] = []
        withs: list[tuple[cst.With, cst.Call, tuple]] = []
        for node, ancestors in _paths(module):
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self.names.learn_import(node)
                continue
            if not isinstance(node, cst.Call):
                continue
            name = self.names.qualname(node.func)
            parent = ancestors[0] if ancestors else None
            if name in INITIALIZE:
                initializes.append((node, ancestors))
            elif name in SCALE_LOSS:
                with_ = ancestors[1] if len(ancestors) > 1 else None
                if isinstance(parent, cst.WithItem) and isinstance(with_, cst.With) and self._unscaled(with_, node):
                    withs.append((with_, node, ancestors[2:]))
            elif name in MASTER_PARAMS:
                if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                    self.plan.handled.add(id(node.func))
            elif name in STATE_DICT and not node.args:
                self.plan.handled.add(id(node.func))
                if isinstance(parent, cst.DictElement) and parent.value is node:
                    self.plan.handled.add(id(node))  # the checkpoint's entry goes
                elif (
                    isinstance(parent, cst.Assign)
                    and parent.value is node
                    and all(isinstance(t.target, cst.Subscript) for t in parent.targets)
                ):
                    self.plan.handled.add(id(node))  # checkpoint["amp"] = amp.state_dict() goes
            elif name in LOAD_STATE_DICT and isinstance(parent, cst.Expr) and parent.value is node:
                self.plan.handled.update((id(node), id(node.func)))
        return initializes, withs

    def _unscaled(self, with_: cst.With, call: cst.Call) -> bool:
        """``with amp.scale_loss(loss, optimizer) as scaled_loss:``, alone in its ``with``."""
        asname = with_.items[0].asname
        return (
            len(with_.items) == 1
            and not any(a.star for a in call.args)
            and call_arg(call, 0, "loss") is not None
            and (asname is None or isinstance(asname.name, cst.Name))
            and not with_.asynchronous
        )

    def _models(self, call: cst.Call, ancestors: tuple) -> list[str]:
        """The names of the models ``amp.initialize`` is given and those it returns them as."""
        found: list[cst.CSTNode] = []
        models = call_arg(call, 0, "models")
        if models is not None:
            found.append(models.value)
        parent = ancestors[0] if ancestors else None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            optimizers = call_arg(call, 1, "optimizers")
            if optimizers is not None and isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                target = target.elements[0].value
            found.append(target)
        keys = []
        for node in found:
            keys.extend(key for key in map(carried_name, _parts(node)) if key is not None)
        return keys

    def _calls_model(self, statement: cst.CSTNode) -> bool:
        for node in subtree(statement):
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                    func = func.value
                if carried_name(func) in self.models:
                    return True
        return False

    def _forward(self, with_: cst.With, call: cst.Call, ancestors: tuple) -> _Forward | None:
        """The statements of the ``with``'s block that compute the loss it scales: from the
        first call of a model to the last assignment of the loss, after any earlier backward
        pass or optimizer step of the block (a GAN's two losses). None when it is not there."""
        block = ancestors[0] if ancestors else None
        loss = carried_name(call_arg(call, 0, "loss").value)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or loss is None:
            return None
        at = next(i for i, s in enumerate(block.body) if s is with_)
        last = next((i for i in range(at - 1, -1, -1) if _assigns(block.body[i], loss)), None)
        if last is None:
            return None
        start = 0
        for i in range(last):
            if calls_training_step(block.body[i]) or id(block.body[i]) in self.scale_loss_withs:
                start = i + 1
        first = next((i for i in range(start, last + 1) if self._calls_model(block.body[i])), None)
        if first is None:
            return None
        statements = block.body[first : last + 1]
        if any(calls_training_step(s) for s in statements):
            return None
        forward = _Forward(block, first, last, loss)
        if not any(self._in_autocast(s) for s in statements):  # already autocast: nothing to add
            forward.wrap = True
        return forward

    def _in_autocast(self, statement: cst.CSTNode) -> bool:
        """``with torch.autocast(...):`` (or CUDA's): the user's autocast already."""
        return isinstance(statement, cst.With) and any(
            isinstance(item.item, cst.Call) and self.names.qualname(item.item.func) in CUDA_AUTOCAST | DEVICE_AUTOCAST
            for item in statement.items
        )

    def _initialize(self, call: cst.Call, ancestors: tuple, count: int, forwards: list) -> str | None:
        """None when ``amp.initialize`` goes (its opt level in ``plan.level``), else the finding that keeps it."""
        if any(a.star for a in call.args) or any(
            a.keyword is not None and a.keyword.value not in INITIALIZE_PARAMETERS for a in call.args
        ):
            return self._kept(call, "its arguments are not all in sight")
        parent = ancestors[0] if ancestors else None
        if (
            not ((isinstance(parent, cst.Assign) and len(parent.targets) == 1) or isinstance(parent, cst.Expr))
            or parent.value is not call
        ):
            return self._kept(call, "its result is used inside an expression")
        enabled = call_arg(call, 2, "enabled")
        if enabled is not None and code_of(enabled.value) == "False":
            self.plan.level[id(call)] = "disabled"
            return None
        if enabled is not None and code_of(enabled.value) != "True":
            return self._kept(call, f"`enabled={code_of(enabled.value)}` is chosen at run time")
        level_arg = call_arg(call, 3, "opt_level")
        level = "O1" if level_arg is None else string_value(level_arg.value)
        if level not in ("O0", "O1", "O2", "O3"):
            return self._kept(call, f"its opt level is chosen at run time (`{code_of(level_arg.value)}`)")
        self.plan.level[id(call)] = level
        if level == "O0":
            return None
        if level == "O3":
            return self._kept(call, "O3 trains the whole model in float16 (apex calls `.half()` on it)")
        overrides = [a for a in call.args if a.keyword is not None and a.keyword.value in PRECISION_OVERRIDES]
        if overrides:
            return self._kept(call, f"`{code_of(overrides[0])}` overrides the precision of {level}".replace(" =", "="))
        if any(isinstance(a, _CONDITIONAL) for a in self._scope(ancestors)):
            return self._kept(call, "it runs only under a condition (a loop, a branch, a try)")
        if count > 1:
            return self._kept(call, f"it is called {count} times in this file")
        if not forwards or any(f is None for f in forwards):
            return self._kept(
                call,
                "xla-migrate finds no forward pass to put in autocast (the statements that compute the loss "
                "`amp.scale_loss` scales, from a call of the model it was given, in the block of that `with`)",
            )
        return None

    @staticmethod
    def _scope(ancestors: tuple):
        for node in ancestors:
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return
            yield node

    def _kept(self, call: cst.Call, reason: str) -> str:
        ctx = self.rule.ctx
        torch = torch_module(ctx)[0]
        autocast = f"`with {self.rule._autocast()}:`"
        level = self.plan.level.get(id(call))
        if level in ("O1", "O2"):
            todo = f"put the forward pass in {autocast}"
        elif level == "O3":
            todo = (
                f"choose its bfloat16 counterpart: `model.to({torch}.bfloat16)` (the whole model in bfloat16, "
                f"as O3 has it in float16) or the forward pass in {autocast}"
            )
        else:
            todo = (
                f"put the forward pass of O1 / O2 in {autocast} (O0 is float32; for O3's float16 model, "
                f"`model.to({torch}.bfloat16)` or that autocast)"
            )
        return (
            f"`{snippet(call)}` is apex mixed precision and {reason}: remove it (without apex it returns its "
            f"models and optimizers as they are) and {todo}; {device_word(ctx)} autocast computes in bfloat16, "
            f"which needs no loss scaling; see {amp_guide(ctx)}"
        )


def _assigns(statement: cst.CSTNode, key: str) -> bool:
    """Whether a line assigns ``key`` (``loss = ...``, ``loss, acc = ...``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
        if isinstance(small, cst.AnnAssign):
            targets = [small.target]
        if any(carried_name(part) == key for target in targets for part in _parts(target)):
            return True
    return False
