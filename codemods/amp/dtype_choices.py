"""Where the dtype of a CUDA autocast is chosen: the analysis XLA401 and XLA405 share.

XLA401 maps float16 to bfloat16 where an autocast's dtype is chosen (a dtype table, a
config string, an argparse default, each branch of a conditional) when every source is in
sight and only feeds autocast; XLA405 keeps off those places."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import libcst as cst

from codemods.amp.common import (
    BFLOAT16,
    CUDA_SCALER,
    DEVICE_SCALER,
    HALF,
    autocast_positions,
    autocast_view,
    is_partial,
)
from codemods.shared.device_values import is_cuda_value, names_device
from codemods.shared.statements import carried_name
from codemods.shared.walk import is_reference, use_context, walk, walked
from migrate_xla.rule.api import GAP, FileContext, call_arg, called, code_of, snippet, string_value, words

# float16 spelled as a string, and what it becomes: for a dtype table's key, a config or
# an argparse default (``"fp16"`` -> ``"bf16"`` only where the table has that key), and
# for ``getattr(torch, name)``.
CHOICE_STRINGS = {"float16": "bfloat16", "fp16": "bf16", "half": "bfloat16"}
GETATTR_HALF = {"float16": "bfloat16", "half": "bfloat16"}
SCALERS = CUDA_SCALER | DEVICE_SCALER
# Expressions a merged ``a if test else a`` may drop: their evaluation does nothing.
_PURE = (
    cst.Name,
    cst.Attribute,
    cst.Comparison,
    cst.BooleanOperation,
    cst.UnaryOperation,
    cst.SimpleString,
    cst.Integer,
    cst.Float,
    cst.Subscript,
    cst.Index,
    cst.SubscriptElement,
)


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
    # argparse options whose string picks the dtype (getattr(torch, ...), a dtype table), by
    # the name the file reads them as (``args.amp_dtype``), with their call and the renames
    # that keep the pick valid ({"float16": "bfloat16", "half": "bfloat16"}; {"fp16": "bf16"}
    # for a table keyed so): a default is mapped here, a value given at run time only where
    # the option is read (XLA406)
    options: dict[str, tuple[cst.Call, dict[str, str]]] = field(default_factory=dict)

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
    half_variables: set[str] = field(default_factory=set)  # names the file assigns torch.float16
    device_variables: set[str] = field(default_factory=set)  # those of them XLA102 rewrites
    # Once XLA406 maps a run-time option's float16 to bfloat16 as argparse reads it, a test
    # ``args.amp_dtype == "float16"`` is always false: id(test) -> its value, for the tests whose
    # branch no run takes makes or uses a GradScaler, and the ids of the nodes of those branches
    never: dict[int, bool] = field(default_factory=dict)
    dead: set[int] = field(default_factory=set)
    # id(partial(autocast, ...) call) -> a call of the name it is bound to that passes autocast's
    # arguments itself (positionally, or dtype= / device_type=), which the migrated partial's would clash with
    overridden: dict[int, cst.Call] = field(default_factory=dict)


# What a call of autocast spells (every name in CUDA_AUTOCAST and DEVICE_AUTOCAST ends in ``autocast``),
# or a partial of it: ``partial(torch.autocast, ...)``, ``partial(torch.cuda.amp.autocast)``
AUTOCAST_CALL = re.compile(f"{called(words('autocast'))}|{words('autocast')}{GAP}[,)]")


def dtype_choices(ctx: FileContext, module: cst.Module) -> DtypeChoices:
    """The analysis of ``module``, made once per file for XLA401 and XLA405. Without a call of
    autocast it finds nothing the rules read (no choice; the device variables are read only
    for an autocast call), so a file without one is not walked (XLA405 alone wakes on files
    without autocast, and ``autocast`` is also a word of other names and of text)."""
    if "dtype_choices" not in ctx.shared:
        found = AUTOCAST_CALL.search(ctx.source)
        ctx.shared["dtype_choices"] = _ChoiceFinder(ctx, module).result if found else DtypeChoices()
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
        self.partials = False  # a partial of CUDA autocast bound to a name
        calls: list[tuple[cst.Call, tuple]] = []
        for node, ancestors in walked(ctx, module):
            node_type = type(node)
            if node_type is cst.Import or node_type is cst.ImportFrom:
                self.names.learn_import(node)
            elif node_type is cst.Name or node_type is cst.Attribute:
                key = node.value if node_type is cst.Name else carried_name(node)
                if key is not None and is_reference(node, ancestors[0] if ancestors else None):
                    self.refs[key].append((node, ancestors))
            elif node_type is cst.Call:
                calls.append((node, ancestors))
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
        cuda = {key for key, values in self.values.items() if any(self._cuda(v) for v in values)}
        result.cuda_variables = cuda
        result.device_variables = {key for key in cuda if names_device(key.rsplit(".", 1)[-1])}
        result.half_variables = {
            key for key, values in self.values.items() if key not in self.opaque and any(self._half(v) for v in values)
        }
        dtypes = []
        for call, ancestors in calls:
            view = autocast_view(self.names, call)
            positions = autocast_positions(self.names, view, cuda, result.half_variables) if view else None
            if positions is not None and is_partial(view, call):
                self._partial_calls(call, ancestors)
            dtype = call_arg(view, positions[0], "dtype") if positions is not None else None
            if dtype is not None and not dtype.star and self.names.qualname(dtype.value) not in HALF:
                dtypes.append(dtype.value)
        self.autocast_dtypes = {id(d) for d in dtypes}  # the uses every choice may share
        if dtypes or self.partials:
            ctx.need_whole_module()  # the names they read may be anywhere in the file
        for dtype in dtypes:
            choice = Choice()
            self._dtype(choice, dtype)
            self._check_shared(choice)
            result.choices[id(dtype)] = choice
            if choice.mapped:
                result.sites.update((key, (code, choice)) for key, code in choice.sites.items())
                result.merged.update((id(b), choice) for b in choice.branches if self._merges(choice, b))
                for key, (option, renames) in choice.options.items():
                    if mappable_option(option) or maps_half(option):
                        self._never(key, renames)
        if result.dead:
            self._never_made()

    def _cuda(self, value: cst.CSTNode) -> bool:
        """A CUDA device value: ``"cuda"``, a CUDA/CPU choice, or ``torch.device(...)`` of one, whose
        ``.type`` (timm's ``device_type=device.type``) is ``"cuda"``."""
        if isinstance(value, cst.Call) and self.names.qualname(value.func) == "torch.device" and value.args:
            value = value.args[0].value
        return is_cuda_value(value)

    def _half(self, value: cst.CSTNode) -> bool:
        """``torch.float16``, or a conditional with it as a branch (``torch.float16 if a else torch.float32``)."""
        if isinstance(value, cst.IfExp):
            return self._half(value.body) or self._half(value.orelse)
        return self.names.qualname(value) in HALF

    def _partial_calls(self, call: cst.Call, ancestors: tuple) -> None:
        """The calls of the name a ``partial(autocast, ...)`` is bound to (``amp_autocast =
        partial(...)``, also as a branch of a conditional, timm's ``amp_autocast = suppress``
        beside it) that pass autocast's arguments themselves: ``amp_autocast(torch.float16)``
        would fill the dtype the migrated partial names, ``amp_autocast(dtype=torch.float16)``
        overrides it. Matched by spelling across the file, as the scaler analysis matches."""
        parent = ancestors[0] if ancestors else None
        if isinstance(parent, cst.IfExp) and len(ancestors) > 1:
            parent = ancestors[1]
        key = None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            key = carried_name(parent.targets[0].target)
        elif isinstance(parent, cst.AnnAssign):
            key = carried_name(parent.target)
        if key is None:
            return
        self.partials = True  # its calls may be anywhere in the file
        for ref, ref_ancestors in self.refs.get(key, ()):
            site = ref_ancestors[0] if ref_ancestors else None
            if not (isinstance(site, cst.Call) and site.func is ref):
                continue
            if any(a.keyword is None or a.keyword.value in ("dtype", "device_type") for a in site.args):
                self.result.overridden.setdefault(id(call), site)

    def _never_made(self) -> None:
        """A name given a GradScaler only in branches no run takes, and None elsewhere, is
        None: its tests (``scaler is not None``, ``if scaler:``) always say so."""
        for key, values in self.values.items():
            values = [
                part
                for v in values
                for part in (
                    (v.body, v.orelse) if isinstance(v, cst.IfExp) and id(v.test) in self.result.never else (v,)
                )
            ]
            made = [v for v in values if isinstance(v, cst.Call) and self.names.qualname(v.func) in SCALERS]
            if not made or any(id(v) not in self.result.dead for v in made) or key in self.opaque:
                continue
            if not all(v in made or (isinstance(v, cst.Name) and v.value == "None") for v in values):
                continue
            for ref, ancestors in self.refs[key]:
                test, branch = (*ancestors, None, None)[:2]
                if id(ref) in self.result.dead:
                    continue
                if test is not None and isinstance(test, (cst.If, cst.IfExp)) and test.test is ref:
                    test, branch, value = ref, test, False  # if scaler:
                elif isinstance(test, cst.Comparison) and test.left is ref and len(test.comparisons) == 1:
                    operator, comparator = test.comparisons[0].operator, test.comparisons[0].comparator
                    if not (isinstance(comparator, cst.Name) and comparator.value == "None"):
                        continue
                    if not isinstance(operator, (cst.Is, cst.IsNot)):
                        continue
                    value = isinstance(operator, cst.Is)
                else:
                    continue
                self._never_branch(test, branch, value)

    def _never_branch(self, test: cst.CSTNode, branch: cst.CSTNode | None, value: bool) -> None:
        """``test`` of ``branch`` always has ``value``: the branch it never takes goes if it makes
        or uses a GradScaler (other code under such a test stays as written: it is not taken)."""
        if not (isinstance(branch, (cst.If, cst.IfExp)) and branch.test is test):
            return
        gone = branch.body if not value else branch.orelse
        if gone is None or not any(_names_scaler(node) for node, _ in walk(gone)):
            return
        self.result.never[id(test)] = value
        self.result.dead.update(id(node) for node, _ in walk(gone))

    def _never(self, key: str, renames: dict[str, str]) -> None:
        """The tests of ``key`` against float16's names, which the mapped option never equals."""
        for ref, ancestors in self.refs[key]:
            test, branch = (*ancestors, None, None)[:2]
            if not (isinstance(test, cst.Comparison) and test.left is ref and len(test.comparisons) == 1):
                continue
            operator, comparator = test.comparisons[0].operator, test.comparisons[0].comparator
            if isinstance(comparator, (cst.Tuple, cst.List, cst.Set)):
                names = [string_value(e.value) for e in comparator.elements]
                equal = isinstance(operator, cst.In)
                if not names or isinstance(operator, (cst.Equal, cst.NotEqual)):
                    continue
            else:
                names = [string_value(comparator)]
                equal = isinstance(operator, cst.Equal)
                if not isinstance(operator, (cst.Equal, cst.NotEqual)):
                    continue
            if not all(name in renames for name in names):
                continue
            self._never_branch(test, branch, not equal)  # the option is never "float16" or "half" once mapped

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode | None) -> None:
        key = carried_name(target)
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
        name = (
            string_value(dest.value)
            if dest is not None
            else next((f.lstrip("-").replace("-", "_") for f in flags if f and f.startswith("--")), None)
        )
        if name:
            self.options[name] = None if name in self.options else call  # twice: not followed

    # -- following a choice -----------------------------------------------------------
    def _site(self, choice: Choice, node: cst.CSTNode, code: str) -> None:
        choice.sites[id(node)] = code
        choice.quoted[id(node)] = node

    def _name(self, choice: Choice, node: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The values a name (``ptdtype``, ``args.dtype``) is given, or None."""
        key = carried_name(node)
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

    def _option(self, node: cst.CSTNode) -> cst.Call | None:
        """The ``add_argument`` call whose value ``args.name`` is, when the file assigns it nothing else."""
        key = carried_name(node)
        if key is None or "." not in key or self.values.get(key):
            return None
        return self.options.get(key.rsplit(".", 1)[-1])

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
            isinstance(call.func, cst.Name)
            and call.func.value == "getattr"
            and len(call.args) == 2
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
            option = self._option(node) if values else None
            renames = {
                k: v
                for k, v in (GETATTR_HALF if required else CHOICE_STRINGS).items()
                if v in valid and (required or k in valid)
            }
            if option is not None and renames:
                choice.options.setdefault(carried_name(node), (option, {}))[1].update(renames)
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
                if (
                    id(ref) in choice.read
                    or id(ref) in self.autocast_dtypes
                    or isinstance(
                        parent, (cst.AssignTarget, cst.ComparisonTarget, cst.Comparison, cst.FormattedStringExpression)
                    )
                ):
                    continue
                if isinstance(parent, cst.AnnAssign) and parent.target is ref:
                    continue
                if _reads_keys(ref, ancestors):
                    continue
                choice.shared = choice.shared or use_context(ref, ancestors)

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
        for node, _ in walk(branch.test):
            if isinstance(node, cst.Call):
                if not (self.names.qualname(node.func) or "").startswith("torch."):
                    return False
            elif (
                isinstance(node, cst.BaseExpression) and not isinstance(node, _PURE) and not isinstance(node, cst.Call)
            ):
                return False
        return True


def _names_scaler(node: cst.CSTNode) -> bool:
    """A name of a scaler (``scaler``, ``self.grad_scaler``, ``GradScaler``), not a word in a string."""
    return isinstance(node, cst.Name) and "scaler" in node.value.lower()


def mappable_option(call: cst.Call) -> bool:
    """Whether XLA406 can map an ``add_argument`` option's value: a plain string (no ``type=``
    but ``str``), one value, stored, with no ``choices=`` or literal string ones."""
    if any(a.star for a in call.args) or not call.args or call.args[0].keyword is not None:
        return False
    kind = call_arg(call, None, "type")
    if kind is not None and not (isinstance(kind.value, cst.Name) and kind.value.value == "str"):
        return False
    action = call_arg(call, None, "action")
    if call_arg(call, None, "nargs") is not None or (action is not None and string_value(action.value) != "store"):
        return False
    choices = call_arg(call, None, "choices")
    if choices is None:
        return True
    return isinstance(choices.value, (cst.List, cst.Tuple, cst.Set)) and all(
        string_value(e.value) is not None for e in choices.value.elements
    )


# XLA406's type=: lambda name: "bfloat16" if name in ("float16", "half") else name, or
# "bf16" if name == "fp16" else name, or {"float16": "bfloat16", "fp16": "bf16"}.get(name, name)
HALF_MAPPING = re.compile(r"""lambda (\w+): (?:(['"])(?:bfloat16|bf16)\2 if \1 (?:in \(|==)|\{.*\}\.get\(\1, \1\))""")


def maps_half(call: cst.Call) -> bool:
    """Whether an option's ``type=`` is XLA406's mapping (a second run)."""
    kind = call_arg(call, None, "type")
    return kind is not None and isinstance(kind.value, cst.Lambda) and bool(HALF_MAPPING.match(code_of(kind.value)))
