"""What a file does with its GradScalers: the analysis XLA402, XLA403 and XLA404 share.

Made once per file (``scaler_uses``, kept in ``ctx.shared``) when the traversal first
meets a name that can be a scaler's: which names hold a GradScaler, where each is made,
and what a disabled GradScaler makes of each of its uses (grad_scaler.py applies it)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import libcst as cst

from codemods.amp.common import CUDA_SCALER, DEVICE_SCALER, NEVER_TAKEN
from codemods.shared.device_values import is_cuda_value
from codemods.shared.statements import carried_name
from codemods.shared.training_loops import OPTIMIZER_NAME
from codemods.shared.walk import is_reference, use_context, walk, walked
from migrate_xla.rule.api import FileContext, call_arg, code_of, string_value


@dataclass
class Scaler:
    """A name that holds a GradScaler (``scaler``, ``self.scaler``) and what the file does with it."""

    key: str
    devices: set[str] = field(default_factory=set)  # "cuda", "xla", "other": what its GradScaler(...) calls make
    constructors: list[cst.Call] = field(default_factory=list)
    odd: list[cst.CSTNode] = field(default_factory=list)  # uses with no XLA meaning: the scaler must stay
    shaped: bool = False  # used as a GradScaler is: scale(loss).backward() or step(optimizer)
    late: bool = False  # used above the first line that names a scaler: seen too late to rewrite

    @property
    def removable(self) -> bool:
        """Created in this file as a CUDA GradScaler and only used in ways a disabled one can replace."""
        return self.devices == {"cuda"} and not self.odd

    @property
    def stays(self) -> bool:
        return bool(self.devices & {"cuda", "xla"}) and not self.removable


@dataclass
class ScalerUses:
    scalers: dict[str, Scaler] = field(default_factory=dict)
    actions: dict[int, tuple[Scaler, str]] = field(default_factory=dict)  # id(node) -> (scaler, what to do)
    constructors: dict[int, Scaler | None] = field(default_factory=dict)  # id(CUDA GradScaler call) -> its name
    loose: bool = False  # a CUDA or XLA GradScaler made and not bound to a name

    @property
    def scaler_stays(self) -> bool:
        return self.loose or any(s.stays for s in self.scalers.values())


def scaler_uses(ctx: FileContext, module: cst.Module, trigger: cst.CSTNode) -> ScalerUses:
    """The analysis of ``module``, made once per file for the rules that share it, when the
    traversal first meets ``trigger`` (a name that can be a scaler's)."""
    if "scaler_uses" not in ctx.shared:
        statement = ctx.statements[-1] if ctx.statements else module
        ctx.shared["scaler_uses"] = analyse(
            walked(ctx, module), trigger, statement, ctx.shared.get(NEVER_TAKEN, frozenset())
        )
    return ctx.shared["scaler_uses"]


def _scaler_device(names: FileContext, call: cst.Call) -> str | None:
    """ "cuda", "xla" or "other" for a GradScaler(...) call, None for any other call."""
    name = names.qualname(call.func)
    if name in CUDA_SCALER:
        return "cuda"
    if name not in DEVICE_SCALER:
        return None
    device = call_arg(call, 0, "device")
    if device is None or is_cuda_value(device.value):
        return "cuda"
    value = string_value(device.value)
    if value is None:
        return "cuda"  # a device variable in a GPU script
    return "xla" if value.startswith("xla") else "other"


def _binding(call: cst.Call, ancestors: tuple) -> tuple[str | None, cst.CSTNode | None, bool]:
    """The name ``call`` is assigned to (``scaler = GradScaler()``, ``self.scaler: ... =
    ...``) and the assignment; or the name and assignment of an expression around it
    (``scaler = GradScaler() if amp else None``), which the rule cannot remove."""
    for depth, node in enumerate(ancestors):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            return carried_name(node.targets[0].target), node, depth == 0
        if isinstance(node, cst.AnnAssign):
            return carried_name(node.target), node, depth == 0
        if isinstance(node, cst.BaseStatement):
            break
    return None, None, False


def _use(ref: cst.CSTNode, ancestors: tuple) -> tuple[str, cst.CSTNode] | None:
    """What a disabled GradScaler makes of this use of the scaler, and the node that changes."""
    p1, p2, p3 = (*ancestors, None, None, None)[:3]
    if not (isinstance(p1, cst.Attribute) and p1.value is ref and isinstance(p2, cst.Call) and p2.func is p1):
        return None
    method, call = p1.attr.value, p2
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    if method == "scale" and len(call.args) == 1 and positional:
        return "unwrap", call
    if method == "step" and positional and call.args[0] is positional[0]:
        return "step", call
    if method == "get_scale" and not call.args:
        return method, call
    if method == "state_dict" and not call.args:
        if isinstance(p3, cst.DictElement) and p3.value is call:
            return "drop", p3
        if (
            isinstance(p3, cst.Assign)
            and p3.value is call
            and all(isinstance(t.target, cst.Subscript) for t in p3.targets)
        ):
            return "remove", p3
        return "state_dict", call
    if method in ("unscale_", "update", "load_state_dict") and isinstance(p3, cst.Expr) and p3.value is call:
        return "remove", p3
    return None


def _is_shaped(what: str, node: cst.CSTNode, ancestors: tuple) -> bool:
    """``X.scale(loss).backward()`` or ``X.step(optimizer)``: how a GradScaler is used."""
    if what == "step":
        owner = node.args[0].value
        return bool(OPTIMIZER_NAME.search(owner.attr.value if isinstance(owner, cst.Attribute) else code_of(owner)))
    parent = ancestors[2] if len(ancestors) > 2 else None
    return what == "unwrap" and isinstance(parent, cst.Attribute) and parent.attr.value == "backward"


def analyse(
    nodes: list[tuple[cst.CSTNode, tuple]],
    trigger: cst.CSTNode,
    statement: cst.CSTNode,
    never: frozenset | set = frozenset(),
) -> ScalerUses:
    """Every GradScaler the file makes, every use of it, and what each use becomes; ``nodes`` is
    the walk of its module.

    Names are matched by spelling across the file, not by scope: two functions'
    ``scaler`` variables count as one, so if either is used in a way no rule converts,
    both stay (conservative, never wrong). Uses that the traversal already left when the
    analysis ran (``trigger``, or else ``statement``, is where it stands) cannot be
    rewritten any more: their scaler stays. Nodes in ``never`` are in branches no run takes
    once XLA406 has mapped the option that decides them (dtype_choices.NEVER_TAKEN): they
    make and use no scaler.
    """
    names = FileContext()
    refs: dict[str, list[tuple[cst.CSTNode, tuple]]] = defaultdict(list)
    calls: list[tuple[cst.Call, tuple]] = []
    functions: dict[str, cst.FunctionDef | None] = {}  # module-level functions; None: defined twice
    order: dict[int, int] = {}  # id(node) -> its place in code order
    for node, ancestors in nodes:
        order[id(node)] = len(order)
        node_type = type(node)
        if node_type is cst.Import or node_type is cst.ImportFrom:
            names.learn_import(node)
        elif id(node) in never:
            continue
        elif node_type is cst.Name:
            if is_reference(node, ancestors[0] if ancestors else None):
                refs[node.value].append((node, ancestors))
        elif node_type is cst.Attribute:
            key = carried_name(node)
            if key is not None:
                refs[key].append((node, ancestors))
        elif node_type is cst.Call:
            calls.append((node, ancestors))
        elif node_type is cst.FunctionDef and isinstance(ancestors[0], cst.Module):
            functions[node.name.value] = None if node.name.value in functions else node

    uses = ScalerUses()
    now = order.get(id(trigger), order.get(id(statement), 0))
    bindings: set[int] = set()  # the assignments that make a scaler
    for call, ancestors in calls:
        device = _scaler_device(names, call)
        if device is None:
            continue
        key, assignment, exact = _binding(call, ancestors)
        scaler = uses.scalers.setdefault(key, Scaler(key)) if key is not None else None
        if scaler is not None:
            scaler.devices.add(device)
            scaler.constructors.append(call)
            if exact:
                bindings.add(id(assignment))
            else:
                scaler.odd.append(assignment)
        elif device in ("cuda", "xla"):
            uses.loose = True
        if device == "cuda":
            uses.constructors[id(call)] = scaler

    for key, scaler in uses.scalers.items():  # the scalers made here: every use must have a meaning
        for ref, ancestors in refs[key]:
            parent = ancestors[0] if ancestors else None
            if isinstance(parent, cst.AssignTarget) and id(ancestors[1]) in bindings:
                continue
            if isinstance(parent, cst.AnnAssign) and parent.target is ref and id(parent) in bindings:
                continue
            actions = _uses_of(ref, ancestors) or _passed_on(ref, ancestors, key, refs, functions)
            if actions is None:
                scaler.odd.append(use_context(ref, ancestors))
                continue
            passed = [node for node in (n for _, n in actions.values()) if _left_before(node, now, order)]
            if passed:  # the traversal left it before the analysis ran: too late to rewrite
                scaler.odd.append(passed[0])
                scaler.late = True
                continue
            uses.actions.update((node, (scaler, what)) for node, (what, _) in actions.items())

    for key, found in refs.items():  # scaler-named values made elsewhere: used as a GradScaler is
        if key in uses.scalers or "scaler" not in key.rsplit(".", 1)[-1].lower():
            continue
        scaler, actions = Scaler(key), {}
        for ref, ancestors in found:
            use = _use(ref, ancestors)
            if use is None or id(use[1]) in uses.actions:  # no meaning, or a scaler made here owns it
                continue
            actions[id(use[1])] = (scaler, use[0])
            scaler.shaped = scaler.shaped or _is_shaped(*use, ancestors)
        if scaler.shaped:
            uses.scalers[key] = scaler
            uses.actions.update(actions)
    return uses


def _left_before(node: cst.CSTNode, now: int, order: dict[int, int]) -> bool:
    """Whether ``node`` comes, whole, before the node at ``now`` in code order."""
    start = order[id(node)]
    return start < now and start + sum(1 for _ in walk(node)) <= now


def _uses_of(ref: cst.CSTNode, ancestors: tuple) -> dict[int, tuple[str, cst.CSTNode]] | None:
    use = _use(ref, ancestors)
    return None if use is None else {id(use[1]): use}


def _passed_on(ref, ancestors, key: str, refs, functions) -> dict[int, tuple[str, cst.CSTNode]] | None:
    """``train(model, scaler)`` where ``train`` is a function of this file that only uses the
    scaler as a GradScaler: its parameter goes, so does the argument at every call of it."""
    arg, call = (*ancestors, None, None)[:2]
    if not (
        isinstance(arg, cst.Arg) and arg.value is ref and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
    ):
        return None
    function = functions.get(call.func.value)
    param = _parameter(function, call, arg) if function is not None else None
    if param is None:
        return None
    actions = {id(param): ("drop-param", param)}
    for site_ref, site_ancestors in refs[function.name.value]:  # every use of the function passes the scaler
        site = site_ancestors[0] if site_ancestors else None
        site_arg = _argument(site, function, param) if isinstance(site, cst.Call) and site.func is site_ref else None
        if site_arg is None or carried_name(site_arg.value) != key:
            return None
        actions[id(site_arg)] = ("drop-arg", site_arg)
    for node, inner in walk(function.body):
        if (
            isinstance(node, cst.Name)
            and node.value == param.name.value
            and is_reference(node, inner[0] if inner else None)
        ):
            use = _use(node, inner)
            if use is None:
                return None
            actions[id(use[1])] = use
    return actions


def _positional_params(function: cst.FunctionDef) -> list[cst.Param]:
    return [*function.params.posonly_params, *function.params.params]


def _parameter(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> cst.Param | None:
    """The parameter of ``function`` that ``arg`` of ``call`` binds."""
    if any(a.star for a in call.args):
        return None
    if arg.keyword is not None:
        named = (*function.params.params, *function.params.kwonly_params)
        return next((p for p in named if p.name.value == arg.keyword.value), None)
    params = _positional_params(function)
    index = call.args.index(arg)
    return params[index] if index < len(params) else None


def _argument(call: cst.Call, function: cst.FunctionDef, param: cst.Param) -> cst.Arg | None:
    """The argument of ``call`` that binds ``param`` of ``function``."""
    if any(a.star for a in call.args):
        return None
    params = _positional_params(function)
    positional = [a for a in call.args if a.keyword is None]
    if param in params and params.index(param) < len(positional):
        return positional[params.index(param)]
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == param.name.value), None)
