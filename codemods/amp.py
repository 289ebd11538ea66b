"""XLA4xx: mixed precision: CUDA float16 autocast and loss scaling become bfloat16 on XLA.

Follows the migration guide's "Automatic Mixed Precision" section and PyTorch/XLA's AMP
guide (https://docs.pytorch.org/xla/master/perf/amp.html): TPUs compute in bfloat16
natively, and bfloat16 keeps float32's exponent range, so it needs no loss scaling.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

import libcst as cst

from codemods.devices import AMP_DEVICE_CALLS, XLA_DEVICE, is_cuda_value, target_name, xla_string
from codemods.lazy_execution import OPTIMIZER_NAME
from migrate_xla.rule import (
    CUDA_WORD,
    EQUAL,
    SAFE,
    TORCH_XLA,
    UNSAFE,
    FileContext,
    Import,
    Rule,
    call_arg,
    code_of,
    drop_items,
    parse_expr,
    snippet,
    string_value,
)
from migrate_xla.tree import NODE_TYPES

AMP_GUIDE = "https://docs.pytorch.org/xla/master/perf/amp.html"
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
DEVICE_AUTOCAST = frozenset(name for name in AMP_DEVICE_CALLS if name.endswith("autocast"))
CUDA_SCALER = frozenset({"torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"})
DEVICE_SCALER = frozenset(name for name in AMP_DEVICE_CALLS if name.endswith("GradScaler"))
HALF = frozenset({"torch.float16", "torch.half"})
CUDA_CUSTOM = {"torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.custom_bwd": "custom_bwd"}
BFLOAT16 = "torch.bfloat16"
NO_SCALING = "bfloat16 needs no loss scaling"


def torch_module(ctx: FileContext) -> tuple[str, list[Import]]:
    """How this file spells ``torch`` (``t`` after ``import torch as t``), and the import
    a replacement needs when the file does not import torch itself."""
    local = ctx.binds("torch")
    return (local, []) if local else ("torch", [Import("torch")])


def arg_index(call: cst.Call, position: int | None, keyword: str) -> int | None:
    """Where the argument passed at ``position`` or as ``keyword`` is in ``call.args``."""
    arg = call_arg(call, position, keyword)
    return None if arg is None else next(i for i, a in enumerate(call.args) if a is arg)


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=EQUAL)


def atomic(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr``, parenthesized when it is moved somewhere a bare operator would bind wrongly."""
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseString, cst.BaseNumber)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class CudaAutocast(Rule):
    """CUDA autocast becomes ``torch.autocast("xla", dtype=torch.bfloat16)``.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively, and bfloat16
    needs no GradScaler (XLA402 removes it). Of the two spellings the AMP guide shows,
    this is the one torch_xla 2.9 can run everywhere: ``torch_xla.amp.autocast(device)``
    only works on TPU and Neuron devices (on CPU PJRT it prints "AMP only supported for
    XLA:TPU. Ignoring autocast." and then fails when entered), while ``torch.autocast("xla",
    dtype=torch.bfloat16)``, which the guide recommends for scripts that run on TPUs, is
    plain PyTorch, works on every PJRT device and prints no warning.

    Recognised however imported: ``torch.cuda.amp.autocast(...)`` and ``torch.autocast`` /
    ``torch.amp.autocast`` whose device is ``"cuda"``, a CUDA/CPU choice, a variable this
    file assigned one to (``device_type = "cuda" if "cuda" in device else "cpu"``), or any
    device with ``dtype=torch.float16``; as a ``with`` or as a decorator. ``enabled=`` and
    ``cache_enabled=`` are kept; the dtype (float16, or a variable that chose one) becomes
    bfloat16. CPU autocast and XLA autocast are left alone. The decorators of custom
    autograd functions, ``torch.cuda.amp.custom_fwd`` / ``custom_bwd``, become
    ``torch.amp.custom_fwd(device_type="xla")`` (a float16 ``cast_inputs`` becomes bfloat16).
    """

    CODE = "XLA401"
    NAME = "cuda-autocast"
    SUMMARY = "CUDA float16 autocast becomes torch.autocast('xla', dtype=torch.bfloat16)"
    FIX = SAFE
    TRIGGERS = (r"autocast",)
    CONTEXT = (CUDA_WORD,)  # the variables assigned a CUDA device choice
    BEFORE = "with torch.cuda.amp.autocast():\n    loss = model(x)\n"
    AFTER = 'with torch.autocast("xla", dtype=torch.bfloat16):\n    loss = model(x)\n'

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.cuda_variables: set[str] = set()  # names this file assigned a CUDA device choice

    def visit_Assign(self, node: cst.Assign) -> None:
        if is_cuda_value(node.value):
            self.cuda_variables.update(code_of(t.target) for t in node.targets)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and is_cuda_value(node.value):
            self.cuda_variables.add(code_of(node.target))

    def _positions(self, call: cst.Call) -> tuple[int, int, int] | None:
        """Positions of ``dtype``, ``enabled`` and ``cache_enabled`` if ``call`` is CUDA autocast."""
        name = self.qualname(call.func)
        if name in CUDA_AUTOCAST:
            return 1, 0, 2  # torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
        if name not in DEVICE_AUTOCAST:
            return None
        device = call_arg(call, 0, "device_type")
        dtype = call_arg(call, 1, "dtype")
        if device is None:
            return None
        cuda = is_cuda_value(device.value) or code_of(device.value) in self.cuda_variables
        half = dtype is not None and self.qualname(dtype.value) in HALF
        if cuda or (half and string_value(device.value) is None):
            return 1, 2, 3  # torch.autocast(device_type, dtype, enabled, cache_enabled)
        return None

    def _custom(self, original, updated, name: str, args: list[cst.Arg]):
        """``torch.cuda.amp.custom_fwd`` / ``custom_bwd``, bare or called with ``args``."""
        torch, imports = torch_module(self.ctx)
        args = [keyword_arg("device_type", cst.SimpleString('"xla"')), *args]
        replacement = cst.Call(parse_expr(f"{torch}.amp.{CUDA_CUSTOM[name]}"), args)
        return self.replace(
            original, updated, replacement, f"`{snippet(original)}` -> `{code_of(replacement)}`: autocast on XLA; see {AMP_GUIDE}",
            imports=imports, drop_if_unused=self.ctx.import_behind(original),
        )

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        name = self.qualname(original.decorator)  # bare @torch.cuda.amp.custom_fwd
        if name not in CUDA_CUSTOM:
            return updated
        return updated.with_changes(decorator=self._custom(original.decorator, updated.decorator, name, []))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in CUDA_CUSTOM and not any(a.star for a in original.args):
            args = []
            for old, new in zip(original.args, updated.args):
                if old.keyword is not None and old.keyword.value == "cast_inputs" and self.qualname(old.value) in HALF:
                    self.ctx.forget_fixes_inside(old)
                    new = new.with_changes(value=parse_expr(f"{torch_module(self.ctx)[0]}.bfloat16"))
                args.append(new)
            return self._custom(original, updated, name, args)
        positions = self._positions(original)
        if positions is None or any(a.star for a in original.args):
            return updated
        dtype_at, enabled_at, cache_at = positions
        torch, imports = torch_module(self.ctx)
        device = call_arg(original, 0, "device_type") if self.qualname(original.func) in DEVICE_AUTOCAST else None
        like = device.value if device is not None and string_value(device.value) is not None else original
        args = [cst.Arg(xla_string(like)), keyword_arg("dtype", parse_expr(f"{torch}.bfloat16"))]
        for keyword, position in (("enabled", enabled_at), ("cache_enabled", cache_at)):
            index = arg_index(original, position, keyword)
            if index is not None:
                args.append(keyword_arg(keyword, updated.args[index].value))
        replacement = cst.Call(parse_expr(f"{torch}.autocast"), args, lpar=updated.lpar, rpar=updated.rpar)
        dtype = call_arg(original, dtype_at, "dtype")
        chosen = ""
        if dtype is not None and self.qualname(dtype.value) not in HALF | {BFLOAT16}:
            chosen = f"; the dtype `{code_of(dtype.value)}` chose is replaced: XLA autocast computes in bfloat16"
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{code_of(replacement)}`: TPUs compute in bfloat16, which "
            f"needs no GradScaler{chosen}; see {AMP_GUIDE}",
            imports=[TORCH_XLA, *imports],
            drop_if_unused=self.ctx.import_behind(original.func),
        )


# -- what a file does with its GradScalers (shared by XLA402, XLA403, XLA404) -----------

_LAYOUT_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after",
                  "header", "footer", "newline", "trailing_whitespace", "equal", "colon", "dot")


@lru_cache(maxsize=None)
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(
        f.name for f in dataclasses.fields(node_type) if not f.name.startswith(_LAYOUT_FIELDS)
    )


def _walk(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, tuple]]:
    """Every node under ``root`` but layout (whitespace, commas, parentheses) in code order,
    with its three nearest ancestors, nearest first. Reading dataclass fields is about ten
    times faster than ``CSTNode.children``. Import statements are not entered."""
    stack: list[tuple[cst.CSTNode, tuple]] = [(root, ())]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.Import or node_type is cst.ImportFrom:
            continue
        children: list[cst.CSTNode] = []
        for name in _child_fields(node_type):
            value = getattr(node, name)
            value_type = type(value)
            if value_type in NODE_TYPES:
                children.append(value)
            elif value_type is tuple or value_type is list:
                children.extend(v for v in value if type(v) in NODE_TYPES)
        inner = (node, *ancestors[:2])
        stack.extend((child, inner) for child in reversed(children))


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
        ctx.shared["scaler_uses"] = _analyse(module, trigger, statement)
    return ctx.shared["scaler_uses"]


def _is_reference(name: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Whether ``name`` refers to a variable (not an attribute, keyword, parameter or definition)."""
    if isinstance(parent, cst.Attribute):
        return parent.attr is not name
    if isinstance(parent, cst.Arg):
        return parent.keyword is not name
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        return parent.name is not name
    return True


def _target_key(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def _scaler_device(names: FileContext, call: cst.Call) -> str | None:
    """"cuda", "xla" or "other" for a GradScaler(...) call, None for any other call."""
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
            return _target_key(node.targets[0].target), node, depth == 0
        if isinstance(node, cst.AnnAssign):
            return _target_key(node.target), node, depth == 0
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
        if isinstance(p3, cst.Assign) and p3.value is call and all(isinstance(t.target, cst.Subscript) for t in p3.targets):
            return "remove", p3
        return "state_dict", call
    if method in ("unscale_", "update", "load_state_dict") and isinstance(p3, cst.Expr) and p3.value is call:
        return "remove", p3
    return None


def _context(ref: cst.CSTNode, ancestors: tuple) -> cst.CSTNode:
    """What to quote for a use of a scaler: the call it is passed to, the comparison it is in."""
    for node in ancestors:
        if not isinstance(node, (cst.Arg, cst.AssignTarget, cst.Element, cst.Tuple, cst.ComparisonTarget, cst.Attribute)):
            return node
    return ref


def _is_shaped(what: str, node: cst.CSTNode, ancestors: tuple) -> bool:
    """``X.scale(loss).backward()`` or ``X.step(optimizer)``: how a GradScaler is used."""
    if what == "step":
        owner = node.args[0].value
        return bool(OPTIMIZER_NAME.search(owner.attr.value if isinstance(owner, cst.Attribute) else code_of(owner)))
    parent = ancestors[2] if len(ancestors) > 2 else None
    return what == "unwrap" and isinstance(parent, cst.Attribute) and parent.attr.value == "backward"


def _analyse(module: cst.Module, trigger: cst.CSTNode, statement: cst.CSTNode) -> ScalerUses:
    """Every GradScaler the file makes, every use of it, and what each use becomes.

    Names are matched by spelling across the file, not by scope: two functions'
    ``scaler`` variables count as one, so if either is used in a way no rule converts,
    both stay (conservative, never wrong). Uses that the traversal already left when the
    analysis ran (``trigger``, or else ``statement``, is where it stands) cannot be
    rewritten any more: their scaler stays.
    """
    names = FileContext()
    refs: dict[str, list[tuple[cst.CSTNode, tuple]]] = defaultdict(list)
    calls: list[tuple[cst.Call, tuple]] = []
    functions: dict[str, cst.FunctionDef | None] = {}  # module-level functions; None: defined twice
    order: dict[int, int] = {}  # id(node) -> its place in code order
    for node, ancestors in _walk(module):
        order[id(node)] = len(order)
        node_type = type(node)
        if node_type is cst.Import or node_type is cst.ImportFrom:
            names.learn_import(node)
        elif node_type is cst.Name:
            if _is_reference(node, ancestors[0] if ancestors else None):
                refs[node.value].append((node, ancestors))
        elif node_type is cst.Attribute:
            key = _target_key(node)
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
                scaler.odd.append(_context(ref, ancestors))
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
    return start < now and start + sum(1 for _ in _walk(node)) <= now


def _uses_of(ref: cst.CSTNode, ancestors: tuple) -> dict[int, tuple[str, cst.CSTNode]] | None:
    use = _use(ref, ancestors)
    return None if use is None else {id(use[1]): use}


def _passed_on(ref, ancestors, key: str, refs, functions) -> dict[int, tuple[str, cst.CSTNode]] | None:
    """``train(model, scaler)`` where ``train`` is a function of this file that only uses the
    scaler as a GradScaler: its parameter goes, so does the argument at every call of it."""
    arg, call = (*ancestors, None, None)[:2]
    if not (isinstance(arg, cst.Arg) and arg.value is ref and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
        return None
    function = functions.get(call.func.value)
    param = _parameter(function, call, arg) if function is not None else None
    if param is None:
        return None
    actions = {id(param): ("drop-param", param)}
    for site_ref, site_ancestors in refs[function.name.value]:  # every use of the function passes the scaler
        site = site_ancestors[0] if site_ancestors else None
        site_arg = _argument(site, function, param) if isinstance(site, cst.Call) and site.func is site_ref else None
        if site_arg is None or _target_key(site_arg.value) != key:
            return None
        actions[id(site_arg)] = ("drop-arg", site_arg)
    for node, inner in _walk(function.body):
        if isinstance(node, cst.Name) and node.value == param.name.value and _is_reference(node, inner[0] if inner else None):
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
        if self.uses is None and ("scaler" in node.value.lower() or self.ctx.aliases.get(node.value, "").endswith("GradScaler")):
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
            return self._rewrite(original, updated, replacement, f"{names} no longer passed to `{code_of(original.func)}()`")
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
                original, updated, parse_expr(constant),
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
                changes[name] = drop_items(getattr(updated, name), lambda p: id(p) in doomed)
                gone = ", ".join(f"`{o.name.value}`" for o, u in pairs if id(u) in doomed)
        if not changes:
            return updated
        return self._rewrite(original, updated, updated.with_changes(**changes), f"parameter {gone} removed, with its GradScaler")

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if self.uses is None:
            return updated
        doomed = {id(u) for o, u in zip(original.elements, updated.elements) if self._owned(o) == "drop"}
        if not doomed:
            return updated
        entries = ", ".join(
            f"{code_of(o.key)}: {snippet(o.value)}" for o, u in zip(original.elements, updated.elements) if id(u) in doomed
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
    device and flagged.
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
        if self.qualname(original.func) in CUDA_SCALER:
            args = [cst.Arg(cst.SimpleString('"xla"')), *updated.args]
        else:
            index = arg_index(original, 0, "device")
            args = list(updated.args)
            if index is None:
                args.insert(0, cst.Arg(cst.SimpleString('"xla"')))
            else:
                args[index] = args[index].with_changes(value=cst.SimpleString('"xla"'))
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
            f"{why}, so it stays, on the XLA device; {NO_SCALING}: remove it and write "
            "`loss.backward()` and `optimizer.step()` for its calls; see " + AMP_GUIDE,
        )
        return self.replace(
            original, updated, replacement, f"`{snippet(original)}` -> `{code_of(replacement)}`",
            imports=[TORCH_XLA, *imports], drop_if_unused=self.ctx.import_behind(original.func),
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
            original, updated, cst.RemoveFromParent(), f"`{snippet(original)}` removed",
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
    TRIGGERS = (r"[sS]caler\.(scale|step)\(",)
    GUESS = " (matched by shape: taken for a GradScaler made elsewhere)"
    BEFORE = (
        "def train_step(model, x, optimizer, scaler):\n    loss = model(x).sum()\n"
        "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n"
    )
    AFTER = "def train_step(model, x, optimizer, scaler):\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"

    def owns(self, scaler: Scaler) -> bool:
        return not scaler.devices and scaler.shaped


SYNCFREE = {
    f"torch.optim{module}.{name}": name
    for name in ("SGD", "Adam", "AdamW")
    for module in ("", f".{name.lower()}")
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
    are drop-in subclasses of torch's, so the swap itself changes no result.
    """

    CODE = "XLA404"
    NAME = "syncfree-optimizer"
    SUMMARY = "SGD/Adam/AdamW become torch_xla.amp.syncfree's where a GradScaler stays"
    FIX = UNSAFE
    TRIGGERS = (r"GradScaler",)
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


PRECISION_NAME = re.compile(r"dtype|precision", re.IGNORECASE)
HALF_STRINGS = {"float16": "bfloat16", "fp16": "bf16"}


class Float16ToBfloat16(Rule):
    """float16 chosen outside autocast becomes bfloat16.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively; GPU code picks
    float16 because "only certain GPUs have bfloat16 support". Rewritten: ``torch.float16``
    and ``torch.half`` (in ``.to(...)``, ``dtype=`` and dtype tables such as
    ``{"float16": torch.float16}[dtype]``), ``x.half()`` -> ``x.to(torch.bfloat16)``,
    ``x.type(torch.cuda.HalfTensor)`` -> ``x.to(torch_xla.device(), torch.bfloat16)``, and
    config strings that choose float16 for a name that says dtype or precision
    (``dtype = "float16"``, an argparse default, a dict entry, a parameter default) ->
    ``"bfloat16"`` (``"fp16"`` -> ``"bf16"``). ``torch.cuda.is_bf16_supported()`` is true on
    TPU: XLA105 makes it ``True``. Unsafe: outside autocast the intent of float16 is not
    always speed (a saved half-precision format, an exported model, a dtype check), so a
    person confirms it.
    """

    CODE = "XLA405"
    NAME = "float16-to-bfloat16"
    SUMMARY = "float16 dtypes, .half() and float16 config strings become bfloat16"
    FIX = UNSAFE
    TRIGGERS = (r"float16|\.half\b|HalfTensor|fp16",)
    BEFORE = 'model = Net().half()\nx = x.to(torch.float16)\nparser.add_argument("--dtype", default="float16")\n'
    AFTER = 'model = Net().to(torch.bfloat16)\nx = x.to(torch.bfloat16)\nparser.add_argument("--dtype", default="bfloat16")\n'

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.autocast_dtypes: set[int] = set()  # autocast's dtype and custom_fwd's cast_inputs: XLA401 decides
        self.beside_bfloat16: set[int] = set()  # float16 listed with bfloat16: the code handles both already

    def _keep_half_beside_bfloat16(self, operands) -> None:
        """``(torch.float16, torch.bfloat16)``, ``{torch.float16: ..., torch.bfloat16: ...}``,
        ``dtype == torch.float16 or dtype == torch.bfloat16``, ``f(torch.half, torch.bfloat16)``:
        code written for both half types. Rewritten, it would list bfloat16 twice (a dict's
        keys would collide)."""
        names = {id(node): self.qualname(node) for node in operands}
        if BFLOAT16 in names.values():
            self.beside_bfloat16 |= {key for key, name in names.items() if name in HALF}

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._keep_half_beside_bfloat16([e.value for e in node.elements])

    visit_List = visit_Set = visit_Tuple

    def visit_Dict(self, node: cst.Dict) -> None:
        self._keep_half_beside_bfloat16([e.key for e in node.elements if isinstance(e, cst.DictElement)])

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        operands, todo = [], [node]
        while todo:
            part = todo.pop()
            if isinstance(part, cst.BooleanOperation):
                todo += [part.left, part.right]
            elif isinstance(part, cst.Comparison):
                operands += [part.left, *(c.comparator for c in part.comparisons)]
        self._keep_half_beside_bfloat16(operands)

    def visit_Call(self, node: cst.Call) -> None:
        self._keep_half_beside_bfloat16([a.value for a in node.args if not a.keyword])  # f(torch.half, torch.bfloat16)
        name = self.qualname(node.func)
        if name in CUDA_AUTOCAST | DEVICE_AUTOCAST or name in CUDA_CUSTOM:
            dtype = call_arg(node, None if name in CUDA_CUSTOM else 1, "cast_inputs" if name in CUDA_CUSTOM else "dtype")
            if dtype is not None:
                self.autocast_dtypes.add(id(dtype.value))

    def _bfloat16(self, original, updated, replacement, imports=()):
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: TPUs compute in bfloat16 natively "
            "(unsafe: check that nothing needs float16 here, such as a saved half-precision format)",
            imports=imports,
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if self.qualname(original) not in HALF or id(original) in self.autocast_dtypes or id(original) in self.beside_bfloat16:
            return updated
        return self._bfloat16(original, updated, updated.with_changes(attr=cst.Name("bfloat16")))

    def _half_string(self, original: cst.CSTNode | None, updated: cst.CSTNode | None, name: str):
        """``updated`` with "float16" made "bfloat16" if ``name`` says dtype or precision."""
        value = string_value(original) if original is not None else None
        if value not in HALF_STRINGS or not PRECISION_NAME.search(name) or not isinstance(original, cst.SimpleString):
            return updated
        quote = original.quote
        replacement = cst.SimpleString(f"{original.prefix}{quote}{HALF_STRINGS[value]}{quote}")
        return self._bfloat16(original, updated, replacement)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        name = " ".join(target_name(t.target) for t in original.targets)
        return updated.with_changes(value=self._half_string(original.value, updated.value, name))

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        return updated.with_changes(value=self._half_string(original.value, updated.value, target_name(original.target)))

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement):
        return updated.with_changes(value=self._half_string(original.value, updated.value, string_value(original.key) or ""))

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        return updated.with_changes(default=self._half_string(original.default, updated.default, original.name.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not isinstance(func, cst.Attribute):
            return updated
        torch, imports = torch_module(self.ctx)
        bfloat16 = cst.Arg(parse_expr(f"{torch}.bfloat16"))
        method = func.attr.value
        if method == "half" and not original.args and self.qualname(original.func) is None:
            replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=[bfloat16])
            return self._bfloat16(original, updated, replacement, imports)
        if method == "type" and len(original.args) == 1 and self.qualname(original.args[0].value) == "torch.cuda.HalfTensor":
            args = [cst.Arg(parse_expr(XLA_DEVICE)), bfloat16]
            replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
            self.ctx.forget_fixes_inside(original)
            return self._bfloat16(original, updated, replacement, [TORCH_XLA, *imports])
        option = call_arg(original, 0, None)
        index = arg_index(original, None, "default")
        if method == "add_argument" and option is not None and index is not None:
            value = self._half_string(original.args[index].value, updated.args[index].value, string_value(option.value) or "")
            args = list(updated.args)
            args[index] = args[index].with_changes(value=value)
            return updated.with_changes(args=args)
        return updated
