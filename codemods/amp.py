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

from codemods.devices import AMP_DEVICE_CALLS, XLA_DEVICE, is_cuda_value, names_device, target_name, xla_string
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
    append_keyword,
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


def autocast_positions(names: FileContext, call: cst.Call, cuda_variables: set[str]) -> tuple[int, int, int] | None:
    """Positions of ``dtype``, ``enabled`` and ``cache_enabled`` if ``call`` is CUDA autocast:
    ``torch.cuda.amp.autocast``, or ``torch.autocast`` on ``"cuda"``, on a CUDA/CPU choice, on
    a variable the file assigned one to, or on any device variable with a float16 dtype."""
    name = names.qualname(call.func)
    if name in CUDA_AUTOCAST:
        return 1, 0, 2  # torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
    if name not in DEVICE_AUTOCAST:
        return None
    device = call_arg(call, 0, "device_type")
    dtype = call_arg(call, 1, "dtype")
    if device is None:
        return None
    cuda = is_cuda_value(device.value) or code_of(device.value) in cuda_variables
    half = dtype is not None and names.qualname(dtype.value) in HALF
    if cuda or (half and string_value(device.value) is None):
        return 1, 2, 3  # torch.autocast(device_type, dtype, enabled, cache_enabled)
    return None


class CudaAutocast(Rule):
    """CUDA autocast becomes XLA autocast; float16 becomes bfloat16, where it is chosen.

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
    ``cache_enabled=`` are kept. A ``"cuda"`` device becomes ``"xla"``; a device variable
    that XLA102 rewrites stays (``torch.autocast(device_type=device_type, ...)`` is valid
    whether it holds ``"xla"`` or, where the script keeps a CPU branch, ``"cpu"``).

    The dtype: a literal float16, or none (CUDA autocast's default is float16), becomes
    ``torch.bfloat16``. A dtype the user chooses (``dtype=ptdtype``) stays, so that
    ``--dtype=float32`` still trains in float32, and float16 becomes bfloat16 where it
    is chosen, followed through the file: the ``torch.float16`` of a dtype table
    (``{"float16": torch.float16, ...}[dtype]``), the string that picks it (``dtype =
    "float16"``, an argparse default, ``getattr(torch, "float16")``), each branch of a
    conditional. A conditional whose branches then agree and whose test only decides
    (``"bfloat16" if torch.cuda.is_bf16_supported() else "float16"``: every XLA device
    supports bfloat16) becomes its one value. These are safe, as the old replacement of
    the whole dtype was: they change only what this autocast computes in (every name on
    the way is used only to choose it, compared, or printed; a comparison such as a
    GradScaler's ``enabled=(dtype == "float16")`` then says that no float16 is used,
    which is true). A string is mapped only where its table has the bfloat16 key. Where
    the choice is not in sight (a parameter, a function's result) or one of its names
    is used for something else too (``model.to(ptdtype)``: XLA405's unsafe territory),
    the autocast's own dtype becomes ``torch.bfloat16 if ptdtype == torch.float16 else
    ptdtype``, which keeps every other choice. The decorators of custom
    autograd functions, ``torch.cuda.amp.custom_fwd`` / ``custom_bwd``, become
    ``torch.amp.custom_fwd(device_type="xla")`` (a float16 ``cast_inputs`` becomes bfloat16).
    """

    CODE = "XLA401"
    NAME = "cuda-autocast"
    SUMMARY = "CUDA autocast becomes XLA autocast; float16 becomes bfloat16 where it is chosen"
    FIX = SAFE
    TRIGGERS = (r"autocast",)
    CONTEXT = (CUDA_WORD, r"float16|fp16|half")  # the device variables; where a dtype is chosen
    BEFORE = "with torch.cuda.amp.autocast():\n    loss = model(x)\n"
    AFTER = 'with torch.autocast("xla", dtype=torch.bfloat16):\n    loss = model(x)\n'

    def visit_Module(self, node: cst.Module) -> None:
        self.choices = dtype_choices(self.ctx, node)

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

    # -- where float16 is chosen ------------------------------------------------------
    def _chosen(self, original, updated, replacement):
        code, choice = self.choices.sites[id(original)]
        through = ", ".join(f"`{key}`" for key in choice.keys)
        return self.replace(
            original, updated, replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: this chooses the dtype autocast computes in"
            f"{f' (through {through})' if through else ''}; XLA autocast computes in bfloat16, which TPUs "
            f"compute in natively and which needs no GradScaler; see {AMP_GUIDE}",
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) not in self.choices.sites:
            return updated
        return self._chosen(original, updated, updated.with_changes(attr=cst.Name("bfloat16")))

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        if id(original) not in self.choices.sites:
            return updated
        return self._chosen(original, updated, updated.with_changes(value=self.choices.sites[id(original)][0]))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        choice = self.choices.merged.get(id(original))
        if choice is None:
            return updated
        self.ctx.forget_fixes_inside(original)
        replacement = updated.body
        return self.replace(
            original, updated, replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: once float16 is bfloat16 both branches "
            f"agree (every XLA device supports bfloat16); this chooses the dtype autocast computes in; see {AMP_GUIDE}",
        )

    # -- the autocast ---------------------------------------------------------------
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
        positions = autocast_positions(self.ctx, original, self.choices.cuda_variables)
        if positions is None or any(a.star for a in original.args):
            return updated
        dtype_at, enabled_at, cache_at = positions
        torch, imports = torch_module(self.ctx)
        dtype_value, why = self._dtype(original, updated, dtype_at, torch)
        device = call_arg(original, 0, "device_type") if self.qualname(original.func) in DEVICE_AUTOCAST else None
        if device is not None and _target_key(device.value) in self.choices.device_variables:
            return self._keep_device(original, updated, dtype_at, dtype_value, why)
        like = device.value if device is not None and string_value(device.value) is not None else original
        args = [cst.Arg(xla_string(like)), keyword_arg("dtype", dtype_value)]
        for keyword, position in (("enabled", enabled_at), ("cache_enabled", cache_at)):
            index = arg_index(original, position, keyword)
            if index is not None:
                args.append(keyword_arg(keyword, updated.args[index].value))
        replacement = cst.Call(parse_expr(f"{torch}.autocast"), args, lpar=updated.lpar, rpar=updated.rpar)
        self.ctx.forget_fixes_inside(original.func)
        if device is not None:
            self.ctx.forget_fixes_inside(device)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{code_of(replacement)}`: TPUs compute in bfloat16, which "
            f"needs no GradScaler{why}; see {AMP_GUIDE}",
            imports=[TORCH_XLA, *imports],
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _dtype(self, original: cst.Call, updated: cst.Call, dtype_at: int, torch: str) -> tuple[cst.BaseExpression, str]:
        """The migrated autocast's dtype, and what the message says about it."""
        index = arg_index(original, dtype_at, "dtype")
        choice = self.choices.choices.get(id(original.args[index].value)) if index is not None else None
        if choice is None:  # float16, or CUDA's default float16
            return parse_expr(f"{torch}.bfloat16"), ""
        value = updated.args[index].value
        if choice.mapped:
            return value, f"; the dtype `{snippet(value)}` is kept: float16 becomes bfloat16 where it is chosen" if choice.sites else ""
        if choice.unknown is not None:
            reads = f" (it reads `{choice.unknown}`)" if choice.unknown != snippet(value) else ""
            why = f"xla-migrate cannot see where `{snippet(value)}` is chosen{reads}"
        else:
            why = f"`{snippet(value)}` is also used outside autocast (`{snippet(choice.shared)}`)"
        if not isinstance(value, (cst.Name, cst.Attribute)):
            self.flag(original, f"{why}: if it can be float16, choose bfloat16 there (TPUs compute in "
                      f"bfloat16 natively, and it needs no GradScaler); see {AMP_GUIDE}")
            return value, ""
        code = code_of(value)
        guarded = parse_expr(f"{torch}.bfloat16 if {code} == {torch}.float16 else {code}")
        return guarded, f"; {why}, so float16 becomes bfloat16 here and any other choice is kept"

    def _keep_device(self, original, updated, dtype_at, dtype_value, why):
        """``torch.autocast(device_type=device_type, dtype=...)``: XLA102 rewrites the variable."""
        index = arg_index(original, dtype_at, "dtype")
        if index is None:
            replacement = append_keyword(updated, "dtype", dtype_value)
        else:
            args = list(updated.args)
            args[index] = args[index].with_changes(value=dtype_value)
            replacement = updated.with_changes(args=args)
        if replacement.deep_equals(updated):
            return updated  # the dtype is mapped where it is chosen
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: the device variable is the XLA device; "
            f"TPUs compute in bfloat16, which needs no GradScaler{why}; see {AMP_GUIDE}",
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


# -- where the dtype of a CUDA autocast is chosen (XLA401 maps float16 there) -------------

# float16 spelled as a string, and what it becomes: for a dtype table's key, a config or
# an argparse default (``"fp16"`` -> ``"bf16"`` only where the table has that key), and
# for ``getattr(torch, name)``.
CHOICE_STRINGS = {"float16": "bfloat16", "fp16": "bf16", "half": "bfloat16"}
GETATTR_HALF = {"float16": "bfloat16", "half": "bfloat16"}
# Expressions a merged ``a if test else a`` may drop: their evaluation does nothing.
_PURE = (cst.Name, cst.Attribute, cst.Comparison, cst.BooleanOperation, cst.UnaryOperation,
         cst.SimpleString, cst.Integer, cst.Float, cst.Subscript, cst.Index, cst.SubscriptElement)


@dataclass
class Choice:
    """How the dtype expression of one CUDA autocast is chosen in this file."""

    sites: dict[int, str] = field(default_factory=dict)  # id(float16 node) -> its bfloat16 code
    quoted: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(site) -> the site, for messages
    branches: list[cst.IfExp] = field(default_factory=list)  # conditionals the choice goes through
    keys: dict[str, None] = field(default_factory=dict)  # the names it passes through, in order
    read: set[int] = field(default_factory=set)  # id of each reference the choice reads
    unknown: str | None = None  # what it depends on that the file does not show
    shared: cst.CSTNode | None = None  # a use of one of its names outside the choice

    @property
    def mapped(self) -> bool:
        """Its float16 is mapped where it is chosen: every source is in sight and only feeds autocast."""
        return self.unknown is None and self.shared is None


@dataclass
class DtypeChoices:
    """The choices of every CUDA autocast of the file whose dtype is an expression."""

    choices: dict[int, Choice] = field(default_factory=dict)  # id(autocast's dtype expression) -> choice
    sites: dict[int, tuple[str, Choice]] = field(default_factory=dict)  # the nodes XLA401 rewrites
    merged: dict[int, Choice] = field(default_factory=dict)  # id(IfExp) whose branches agree once mapped
    cuda_variables: set[str] = field(default_factory=set)  # names the file assigns a CUDA device choice
    device_variables: set[str] = field(default_factory=set)  # those of them XLA102 rewrites


def dtype_choices(ctx: FileContext, module: cst.Module) -> DtypeChoices:
    """The analysis of ``module``, made once per file for XLA401 and XLA405."""
    if "dtype_choices" not in ctx.shared:  # XLA405 alone wakes on files without autocast: no walk there
        ctx.shared["dtype_choices"] = _ChoiceFinder(ctx, module).result if "autocast" in ctx.source else DtypeChoices()
    return ctx.shared["dtype_choices"]


def _reads_keys(ref: cst.CSTNode, ancestors: tuple) -> bool:
    """``list(DTYPES)``, ``sorted(DTYPES)``, ``DTYPES.keys()``: a table's keys, which stay; and
    ``print(dtype)``, which after the mapping prints the dtype the run uses."""
    p1, p2, p3 = (*ancestors, None, None, None)[:3]
    if isinstance(p1, cst.Attribute) and p1.value is ref and p1.attr.value == "keys":
        return isinstance(p2, cst.Call) and p2.func is p1
    if not (isinstance(p1, cst.Arg) and isinstance(p2, cst.Call) and isinstance(p2.func, cst.Name)):
        return False
    return p2.func.value == "print" or (len(p2.args) == 1 and p2.func.value in ("list", "sorted", "tuple", "set"))


class _ChoiceFinder:
    """Follows an autocast's ``dtype=`` back to where it is chosen: names assigned in the
    file (matched by spelling, as the scaler analysis does), dtype tables (``{...}[key]``),
    ``getattr(torch, name)``, conditionals and argparse defaults."""

    def __init__(self, ctx: FileContext, module: cst.Module) -> None:
        self.names = FileContext()
        self.values: dict[str, list[cst.CSTNode]] = defaultdict(list)
        self.opaque: dict[str, cst.CSTNode] = {}  # names bound some other way (parameter, loop, +=)
        self.refs: dict[str, list[tuple[cst.CSTNode, tuple]]] = defaultdict(list)
        self.options: dict[str, cst.Call] = {}  # argparse dest -> its add_argument call
        calls: list[cst.Call] = []
        for node, ancestors in _walk(module):
            node_type = type(node)
            if node_type is cst.Import or node_type is cst.ImportFrom:
                self.names.learn_import(node)
            elif node_type is cst.Name or node_type is cst.Attribute:
                key = node.value if node_type is cst.Name else _target_key(node)
                if key is not None and _is_reference(node, ancestors[0] if ancestors else None):
                    self.refs[key].append((node, ancestors))
            elif node_type is cst.Call:
                calls.append(node)
                self._learn_option(node)
            elif node_type is cst.Assign:
                for target in node.targets:
                    self._bind(target.target, node.value)
            elif node_type is cst.AnnAssign:
                self._bind(node.target, node.value)
            elif node_type is cst.AugAssign or node_type is cst.For or node_type is cst.CompFor:
                self._bind(node.target, None)
            elif node_type is cst.WithItem and node.asname is not None:
                self._bind(node.asname.name, None)
            elif node_type is cst.Param:
                self._bind(node.name, None)
        result = self.result = DtypeChoices()
        cuda = {key for key, values in self.values.items() if any(is_cuda_value(v) for v in values)}
        result.cuda_variables = cuda
        result.device_variables = {key for key in cuda if names_device(key.rsplit(".", 1)[-1])}
        dtypes = []
        for call in calls:
            positions = autocast_positions(self.names, call, cuda)
            dtype = call_arg(call, positions[0], "dtype") if positions is not None else None
            if dtype is not None and not dtype.star and self.names.qualname(dtype.value) not in HALF:
                dtypes.append(dtype.value)
        self.autocast_dtypes = {id(d) for d in dtypes}  # the uses every choice may share
        if dtypes:
            ctx.need_whole_module()  # the names they read may be anywhere in the file
        for dtype in dtypes:
            choice = Choice()
            self._dtype(choice, dtype)
            self._check_shared(choice)
            result.choices[id(dtype)] = choice
            if choice.mapped:
                result.sites.update((key, (code, choice)) for key, code in choice.sites.items())
                result.merged.update((id(b), choice) for b in choice.branches if self._merges(choice, b))

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode | None) -> None:
        key = _target_key(target)
        if key is not None and value is not None:
            self.values[key].append(value)
        elif key is not None:
            self.opaque.setdefault(key, target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def _learn_option(self, call: cst.Call) -> None:
        """``parser.add_argument("--dtype", default=...)``: ``args.dtype`` starts there."""
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            return
        flags = [string_value(a.value) for a in call.args if a.keyword is None]
        dest = call_arg(call, None, "dest")
        name = string_value(dest.value) if dest is not None else next(
            (f.lstrip("-").replace("-", "_") for f in flags if f and f.startswith("--")), None)
        if name:
            self.options[name] = None if name in self.options else call  # twice: not followed

    # -- following a choice -----------------------------------------------------------
    def _site(self, choice: Choice, node: cst.CSTNode, code: str) -> None:
        choice.sites[id(node)] = code
        choice.quoted[id(node)] = node

    def _name(self, choice: Choice, node: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The values a name (``ptdtype``, ``args.dtype``) is given, or None."""
        key = _target_key(node)
        if key is None or key in self.opaque:
            return None
        if key in choice.keys:
            choice.read.add(id(node))
            return []  # already followed
        values = self.values.get(key)
        if not values and "." in key:
            option = self.options.get(key.rsplit(".", 1)[-1])
            default = call_arg(option, None, "default") if option is not None else None
            values = [default.value] if default is not None else None
        if values:
            choice.read.add(id(node))
            choice.keys[key] = None
        return values or None

    def _unknown(self, choice: Choice, node: cst.CSTNode) -> None:
        choice.unknown = choice.unknown or snippet(node)

    def _dtype(self, choice: Choice, node: cst.CSTNode) -> None:
        """Follow an expression that is a torch dtype."""
        name = self.names.qualname(node)
        if name in HALF:
            self._site(choice, node, BFLOAT16)
        elif name is not None and name.startswith("torch."):
            return
        elif isinstance(node, cst.IfExp):
            choice.branches.append(node)
            self._dtype(choice, node.body)
            self._dtype(choice, node.orelse)
        elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            keys = self._table(choice, node.value)
            if keys is not None:
                self._string(choice, node.slice[0].slice.value, keys, required=False)
        elif isinstance(node, cst.Call) and self._is_getattr_torch(node):
            self._string(choice, node.args[1].value, set(GETATTR_HALF.values()), required=True)
        elif isinstance(node, (cst.Name, cst.Attribute)):
            values = self._name(choice, node)
            if values is None:
                self._unknown(choice, node)
            for value in values or ():
                self._dtype(choice, value)
        else:
            self._unknown(choice, node)

    def _is_getattr_torch(self, call: cst.Call) -> bool:
        return (
            isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) == 2
            and all(a.keyword is None and not a.star for a in call.args)
            and self.names.qualname(call.args[0].value) == "torch"
        )

    def _table(self, choice: Choice, node: cst.CSTNode) -> set[str] | None:
        """Follow a dtype table (``{"float16": torch.float16, ...}``); its string keys."""
        if isinstance(node, cst.Dict):
            keys = set()
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    self._unknown(choice, element)
                    return None
                keys.add(string_value(element.key))
                self._dtype(choice, element.value)
            return keys
        values = self._name(choice, node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if not values:
            self._unknown(choice, node)
            return None
        keys: set[str] = set()
        for value in values:
            found = self._table(choice, value)
            if found is None:
                return None
            keys |= found
        return keys

    def _string(self, choice: Choice, node: cst.CSTNode, valid: set, required: bool) -> None:
        """Follow the string that picks a dtype: a table key, or a name for getattr(torch, ...).
        float16 becomes bfloat16 where the result is still valid (the table has that key)."""
        value = string_value(node)
        if isinstance(node, cst.SimpleString) and value is not None:
            if CHOICE_STRINGS.get(value) in valid:
                quote = node.quote
                self._site(choice, node, f"{node.prefix}{quote}{CHOICE_STRINGS[value]}{quote}")
        elif isinstance(node, cst.IfExp):
            choice.branches.append(node)
            self._string(choice, node.body, valid, required)
            self._string(choice, node.orelse, valid, required)
        elif isinstance(node, (cst.Name, cst.Attribute)):
            values = self._name(choice, node)
            if values is None and required:
                self._unknown(choice, node)
            for value in values or ():
                self._string(choice, value, valid, required)
        elif required:
            self._unknown(choice, node)

    def _check_shared(self, choice: Choice) -> None:
        """A name of the choice used outside it: mapping float16 there would change that use too.
        Comparisons (``dtype == "float16"``, which enables a GradScaler), f-strings and
        ``print`` may read it: after the mapping they see the dtype the run computes in."""
        for key in choice.keys:
            for ref, ancestors in self.refs[key]:
                parent = ancestors[0] if ancestors else None
                if id(ref) in choice.read or id(ref) in self.autocast_dtypes or isinstance(parent, (cst.AssignTarget, cst.ComparisonTarget, cst.Comparison,
                                                                 cst.FormattedStringExpression)):
                    continue
                if isinstance(parent, cst.AnnAssign) and parent.target is ref:
                    continue
                if _reads_keys(ref, ancestors):
                    continue
                choice.shared = choice.shared or _context(ref, ancestors)

    def _merges(self, choice: Choice, branch: cst.IfExp) -> bool:
        """``"bfloat16" if cuda_has_bf16 else "float16"``: both branches agree once mapped, and
        the test does nothing but decide (so it can go)."""
        def meaning(node):
            if id(node) in choice.sites:
                return CHOICE_STRINGS[string_value(node)] if isinstance(node, cst.SimpleString) else BFLOAT16
            return string_value(node) if isinstance(node, cst.SimpleString) else self.names.qualname(node)
        body, orelse = meaning(branch.body), meaning(branch.orelse)
        if body is None or body != orelse:
            return False
        for node, _ in _walk(branch.test):
            if isinstance(node, cst.Call):
                if not (self.names.qualname(node.func) or "").startswith("torch."):
                    return False
            elif isinstance(node, cst.BaseExpression) and not isinstance(node, _PURE) and not isinstance(node, cst.Call):
                return False
        return True


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
    person confirms it. Where float16 only chooses the dtype of a CUDA autocast (nanoGPT's
    ``dtype`` string and ``ptdtype`` table), XLA401 maps it, safely, and this rule keeps off.
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

    def visit_Module(self, node: cst.Module) -> None:
        self.choices = dtype_choices(self.ctx, node)  # where XLA401 maps an autocast's float16

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

    def visit_IfExp(self, node: cst.IfExp) -> None:
        # XLA401's guard, ``torch.bfloat16 if dtype == torch.float16 else dtype``
        test = node.test
        compared = [test.left, *(c.comparator for c in test.comparisons)] if isinstance(test, cst.Comparison) else []
        self._keep_half_beside_bfloat16([node.body, *compared])

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
        if (
            self.qualname(original) not in HALF or id(original) in self.autocast_dtypes
            or id(original) in self.beside_bfloat16 or id(original) in self.choices.sites
        ):
            return updated
        return self._bfloat16(original, updated, updated.with_changes(attr=cst.Name("bfloat16")))

    def _half_string(self, original: cst.CSTNode | None, updated: cst.CSTNode | None, name: str):
        """``updated`` with "float16" made "bfloat16" if ``name`` says dtype or precision."""
        value = string_value(original) if original is not None and id(original) not in self.choices.sites else None
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
