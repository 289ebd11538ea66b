"""What XLA110 (legacy_types.py) decides about a file before the traversal: the plan.

Which uses of a legacy typed tensor become which factory on which device (``calls``,
``type_calls``), which assignments of a type go (``removed``), and which availability flags
and tests are ``False`` because they select or guard what cannot be converted (``flags_off``,
``tests_off``). The rule carries the plan out as the traversal leaves each node."""

from __future__ import annotations

import libcst as cst

from codemods.devices.device_check import gpu_only_feature
from codemods.devices.legacy_type_names import (
    AVAILABILITY,
    CUDA_TYPES,
    LEGACY_DTYPES,
    LegacyTypeNames,
    bindings_of,
    binds,
    may_plan,
    walk,
)
from codemods.shared.device_values import (
    ON_RUNTIME,
    XLA_DEVICE,
    cuda_choice,
    is_cuda_literal,
    names_device,
)
from migrate_xla.rule.api import TRIVIA, FileContext, code_nodes, code_of, snippet, string_value, subtree

# What a device variable may hold that is the XLA device already (_device_variables)
XLA_DEVICE_CALLS = frozenset({"torch_xla.device", "torch_xla.core.xla_model.xla_device"})
# What a test repeated at each use of a type may be made of (_plain)
_PLAIN = (
    cst.Name,
    cst.Attribute,
    cst.BooleanOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.ComparisonTarget,
    cst.Integer,
    cst.SimpleString,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
)


def _why_off(flag: str, what: str, device: str = XLA_DEVICE) -> str:
    return (
        f"`{flag}` asks whether a GPU is there and leads to {what}, which still needs CUDA: `{flag}` is now "
        "`False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand "
        f"(`torch.empty/torch.tensor(..., dtype=..., device={device})`, `x.to(device, dtype)`) "
        "and restore the check"
    )


class LegacyTypePlan(LegacyTypeNames):
    """What XLA110 does in one file, decided before the traversal (a type is chosen at the top
    of the file and used in functions below it); ``code`` is the rule's, for its suppressions."""

    def __init__(self, ctx: FileContext, code: str) -> None:
        super().__init__()
        self.ctx, self.code = ctx, code
        self.calls: dict[int, tuple[str, str, str, str]] = {}  # call -> (kind, legacy name, device, what)
        self.type_calls: dict[int, tuple[str, str]] = {}  # x.type(T) -> (legacy name, device)
        self.removed: set[int] = set()  # assignments of a converted type
        self.flags_off: dict[int, str] = {}  # flag assignment -> why it is False
        self.tests_off: dict[int, str] = {}  # a flag's Name in a test, or an availability test -> why
        self.roots: dict[str, cst.BaseExpression] = {}  # a type's name -> its value, when another name is bound to it

    def wanted(self, module: cst.Module) -> bool:
        """Whether ``module`` has anything to plan: a legacy CUDA type, or an availability test
        named through torch.cuda that may select one or guard a GPU-only feature. Learns the
        file's imports (``names``) on the way."""
        text = self.ctx.source or code_of(module)
        features = gpu_only_feature(self.ctx.runtime).search(text)  # what an availability flag may guard
        if not may_plan(text, features):
            return False  # no legacy CUDA type and no availability flag to plan for: nothing to plan
        everything = list(code_nodes(module))
        # The plan is made before the traversal meets the imports: names resolve through the file's imports
        self.names = FileContext()
        for found in everything:
            if type(found) in (cst.Import, cst.ImportFrom):
                self.names.learn_import(found)
        # A reference to torch.cuda.FloatTensor or torch.cuda.is_available spells its last part, or
        # is a name an import bound to it: only those are resolved (qualname costs)
        wanted = {*LEGACY_DTYPES, "is_available"}
        wanted |= {name for name, full in self.names.aliases.items() if full in CUDA_TYPES or full in AVAILABILITY}
        return any(
            (type(n) is cst.Name and n.value in wanted or type(n) is cst.Attribute and n.attr.value in wanted)
            and self.legacy_ref(n)
            or type(n) is cst.Call
            and (
                features and self._last_part(n.func) in wanted and self.availability_call(n) or self.string_type_call(n)
            )
            for n in everything
        )

    @staticmethod
    def _last_part(node: cst.CSTNode) -> str | None:
        if type(node) is cst.Name:
            return node.value
        return node.attr.value if type(node) is cst.Attribute else None

    def make(self, module: cst.Module) -> None:
        """Decides what becomes of each legacy type and availability flag of ``module``."""
        nodes = list(walk(module))
        bindings = bindings_of(nodes)
        # The flags set from an availability test (cuda = torch.cuda.is_available(), args.cuda = not
        # args.no_cuda and torch.cuda.is_available()): their assignments, by the flag's code
        checks: dict[str, list] = {}
        for node, _ in nodes:
            # exact type checks in the loops over every node: isinstance on LibCST's ABCs is slow
            if type(node) is cst.Assign and len(node.targets) == 1:
                target = node.targets[0].target
                if isinstance(target, (cst.Name, cst.Attribute)):
                    checks.setdefault(code_of(target), []).append(node)
        available = {
            key: assigns
            for key, assigns in checks.items()
            if all(any(map(self.availability_call, subtree(a.value))) for a in assigns)
            and all(v is not None for v, _ in bindings.get(key, ()))
        }
        # ... and those that are nothing else: on XLA they are always true
        flags = {key for key, assigns in available.items() if all(self.is_availability(a.value) for a in assigns)}
        top = {id(statement): index for index, statement in enumerate(module.body)}
        devices = self._device_variables(module, bindings)
        # Tensor = FloatTensor: a name bound once to another that is bound once to a type
        single = {name: values[0][0] for name, values in bindings.items() if len(values) == 1 and values[0][0]}
        self.roots = {}
        for name, value in single.items():
            if isinstance(value, cst.Name) and value.value in single and value.value != name:
                root = single[value.value]
                if not isinstance(root, cst.Name) and self._legacy_value(root) is not None:
                    self.roots[value.value] = root
        direct_calls, direct_types, unconverted = [], [], []
        for node, ancestors in nodes:
            legacy = self.legacy_ref(node)
            if legacy is None:
                if type(node) is cst.Call and self.string_type_call(node):
                    direct_types.append((node, ancestors, CUDA_TYPES[string_value(node.args[0].value)]))
                continue
            parent = ancestors[-1] if ancestors else None
            grand = ancestors[-2] if len(ancestors) > 1 else None
            if isinstance(parent, cst.Call) and parent.func is node:
                direct_calls.append((parent, ancestors[:-1], legacy))
            elif isinstance(parent, cst.Arg) and self.is_type_call(grand, parent):
                direct_types.append((grand, ancestors[:-2], legacy))
            elif not _named_value(node, ancestors) and not (
                isinstance(parent, cst.IfExp)
                and self._legacy_value(parent) is not None
                and _named_value(parent, ancestors[:-1])
            ):
                unconverted.append((node, ancestors))  # isinstance(x, T), self.T = T, set_default_tensor_type(T)
        named = {
            name: values
            for name, values in bindings.items()
            if any(v is not None and self._legacy_value(v) is not None for v, _ in values)
        }
        # An availability flag that selects what cannot be converted is off where it is set
        off: dict[str, str] = {}
        for name, (why, _, _) in self._named_plans(named, nodes, flags, devices, top).items():
            if why is None:
                continue
            values = named[name]
            for value, ancestors in values:
                found = self._legacy_value(value) if value is not None else None
                cond = found[1] if found is not None else None
                tests = list(_and_operands(cond)) if cond is not None else []
                for check in [*tests, *_guarding_checks(ancestors[-1], ancestors[:-1])] if ancestors else tests:
                    if _key(check) in available:
                        off.setdefault(_key(check), f"`{snippet(value)}` ({why})")
                    elif self.availability_call(check):
                        self.tests_off[id(check)] = _why_off(
                            code_of(check), f"`{snippet(value)}` ({why})", self.ctx.api.device
                        )
        for node, ancestors in unconverted:
            for check in _guarding_checks(node, ancestors):
                if _key(check) in available:
                    off.setdefault(_key(check), f"`{snippet(node)}`")
                elif self.availability_call(check):
                    self.tests_off[id(check)] = _why_off(code_of(check), f"`{snippet(node)}`", self.ctx.api.device)
        for key, why in off.items():
            for assign in available[key]:
                if key in flags:
                    self.flags_off[id(assign)] = _why_off(key, why, self.ctx.api.device)
                else:  # args.cuda = not args.no_cuda and False
                    for call in filter(self.availability_call, subtree(assign.value)):
                        self.tests_off[id(call)] = _why_off(key, why, self.ctx.api.device)
        flags -= set(off)  # a flag set off is a choice like the user's own: its CPU branch stays
        for name, (why, calls, types) in self._named_plans(named, nodes, flags, devices, top).items():
            values = named[name]
            if why is None:
                self.calls.update(calls)
                self.type_calls.update(types)
                uses = [node for node, _ in nodes if id(node) in calls or id(node) in types]
                if not any(self.ctx.silenced(self.code, use) for use in uses):  # a use left as it is needs the name
                    self.removed.update(id(ancestors[-1]) for _, ancestors in values)
        for call, ancestors, legacy in direct_calls:
            kind = self.call_kind(call)
            if kind is not None:
                self.calls[id(call)] = (kind, legacy, self._device(None, ancestors, devices, top), snippet(call))
        for call, ancestors, legacy in direct_types:
            self.type_calls[id(call)] = (legacy, self._device(None, ancestors, devices, top))
        self._features_off(nodes, set(available) - set(off))

    def _features_off(self, nodes: list, flags: set[str]) -> None:
        """``if cuda: model = nn.DataParallel(model)``: that check is off (the flag elsewhere is not)."""
        if not flags:
            return
        for node, _ in nodes:
            if type(node) is cst.Call:
                for arg in node.args:
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    if keyword in ("fused", "capturable") and _key(arg.value) in flags:
                        self.tests_off[id(arg.value)] = (
                            f"`{_key(arg.value)}` asks whether a GPU is there and is passed as `{keyword}=`, which "
                            f"only CUDA has: `{keyword}=False` here, so it stays off on {ON_RUNTIME[self.ctx.runtime]}"
                        )
            if type(node) not in (cst.If, cst.IfExp):
                continue
            operands = [operand for operand in _and_operands(node.test) if _key(operand) in flags]
            if not operands or "device_count" in code_of(node.test):
                continue  # a device count: XLA610's
            found = gpu_only_feature(self.ctx.runtime).search(code_of(node.body))
            for operand in operands if found else ():
                self.tests_off[id(operand)] = (
                    f"`{_key(operand)}` asks whether a GPU is there and guards `{found.group(0)}`, which "
                    f"only CUDA has: this check of `{_key(operand)}` is now `False`, "
                    f"so it stays off on {ON_RUNTIME[self.ctx.runtime]}"
                )

    def _legacy_value(self, value: cst.CSTNode) -> tuple[str, cst.BaseExpression | None, bool] | None:
        """(legacy name, the condition that selects CUDA or None, whether CUDA is the body) of a type value."""
        legacy = self.legacy_ref(value)
        if legacy is not None:
            return legacy, None, True
        if isinstance(value, cst.Name) and value.value in self.roots:
            return self._legacy_value(self.roots[value.value])
        if isinstance(value, cst.IfExp):
            for cuda, cpu, first in ((value.body, value.orelse, True), (value.orelse, value.body, False)):
                legacy = self.legacy_ref(cuda)
                if legacy is not None and self.cpu_ref(cpu) == legacy:
                    test = value.test
                    if not first and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                        return legacy, test.expression, True  # torch.FloatTensor if not cuda else torch.cuda...
                    return legacy, test, first
        return None

    def _named_plans(self, named, nodes, flags, devices, top) -> dict:
        """Each name's plan; a type and the names bound to it (``Tensor = FloatTensor``) convert together."""
        plans = {name: self._named_plan(name, values, nodes, flags, devices, top) for name, values in named.items()}
        for name, values in named.items():
            value = values[0][0]
            if isinstance(value, cst.Name) and value.value in self.roots and value.value in plans:
                root = value.value
                for one, other in ((name, root), (root, name)):
                    if plans[one][0] is None and plans[other][0] is not None:
                        plans[one] = (f"`{other}`: {plans[other][0]}", {}, {})
        return plans

    def _named_plan(self, name, values, nodes, flags, devices, top):
        """(None, calls, .type() calls) to convert a name bound to a legacy type, or (why not, {}, {})."""
        selections = []
        for value, ancestors in values:
            found = self._legacy_value(value) if value is not None else None
            if found is None:
                return f"`{name}` is also bound to something else", {}, {}
            assign = ancestors[-1] if ancestors else None
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and _statement(ancestors)):
                return f"`{name}` is bound in a way this rule does not convert", {}, {}
            selections.append(found)
        if len({legacy for legacy, _, _ in selections}) > 1:
            return f"`{name}` names several types", {}, {}
        uses = []
        for node, ancestors in nodes:
            if not (type(node) is cst.Name and node.value == name) or not ancestors:
                continue
            parent = ancestors[-1]
            if binds(parent, node):
                continue
            grand = ancestors[-2] if len(ancestors) > 1 else None
            if isinstance(parent, cst.Call) and parent.func is node:
                kind = self.call_kind(parent)
                if kind is None:
                    return f"`{snippet(parent)}`", {}, {}
                uses.append((parent, kind, ancestors[:-1]))
            elif isinstance(parent, cst.Arg) and self.is_type_call(grand, parent):
                uses.append((grand, None, ancestors[:-2]))
            elif name in self.roots and _named_value(node, ancestors):
                continue  # Tensor = FloatTensor: planned with Tensor
            else:
                shown = grand if isinstance(parent, cst.Arg) and grand is not None else parent
                return f"`{snippet(shown)}`", {}, {}
        calls, types = {}, {}
        for call, kind, ancestors in uses:
            chosen = {self._device(cond, ancestors, devices, top, flags, first) for _, cond, first in selections}
            if None in chosen:
                return "its condition", {}, {}
            if len(chosen) > 1:
                return f"`{name}` selects the device in different ways", {}, {}
            device = chosen.pop()
            legacy = selections[0][0]
            if kind is None:
                types[id(call)] = (legacy, device)
            else:
                calls[id(call)] = (kind, legacy, device, snippet(call))
        return None, calls, types

    def _device_variables(self, module: cst.Module, bindings) -> list[tuple[int, str, str | None]]:
        """(top-level index, name, the flag it chooses on, or None for the XLA device) of the device variables.

        A name bound once in the file, at the top level, to what XLA101 / XLA102 make the XLA
        device (``torch.device("cuda")``, ``"cuda" if torch.cuda.is_available() else "cpu"``)
        or a choice on a flag (``torch.device("cuda" if cuda else "cpu")``)."""
        found = []
        for index, statement in enumerate(module.body):
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                continue
            assign = statement.body[0]
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                continue
            target = assign.targets[0].target
            if not isinstance(target, cst.Name) or len(bindings.get(target.value, ())) != 1:
                continue
            value = assign.value
            if isinstance(value, cst.Call) and self.qualname(value.func) in XLA_DEVICE_CALLS:
                found.append((index, target.value, None))
                continue
            if isinstance(value, cst.Call) and self.qualname(value.func) == "torch.device":
                if not value.args or value.args[0].keyword is not None or value.args[0].star:
                    continue
                value = value.args[0].value
            elif not names_device(target.value):
                continue  # a string: XLA102 makes it "xla" where the name says it is a device
            if is_cuda_literal(value) and not isinstance(value, cst.IfExp):
                found.append((index, target.value, None))
            elif cuda_choice(value) is not None and is_cuda_literal(value.body):
                test = value.test
                found.append((index, target.value, None if self.is_availability(test) else code_of(test)))
        return found

    def _device(self, cond, ancestors, devices, top, flags=frozenset(), cuda_first=True) -> str | None:
        """The device code for a use whose type is CUDA when ``cond`` holds (always, when None)."""
        position = top.get(id(ancestors[1])) if len(ancestors) > 1 else None
        usable = [(name, on) for index, name, on in devices if position is not None and index < position]
        xla = next((name for name, on in usable if on is None), None)
        device = self.ctx.api.device  # torch_xla.device(); torch.device("tpu")
        if cond is None:
            return xla or device
        test = code_of(cond)
        if not cuda_first:  # torch.FloatTensor if args.cpu else torch.cuda.FloatTensor
            return f'"cpu" if {test} else {xla or device}' if _plain(cond) else None
        if isinstance(cond, cst.Attribute) and cond.attr.value == "is_cuda" and self.qualname(cond) is None:
            return f"{code_of(cond.value)}.device"
        if self.is_availability(cond) or test in flags:
            chosen = next((name for name, on in usable if on == test), None)
            return xla or chosen or device
        if not _plain(cond):
            return None
        chosen = next((name for name, on in usable if on == test), None)
        return chosen or f'{device} if {test} else "cpu"'


def _statement(ancestors) -> cst.CSTNode | None:
    """The innermost simple statement line among ``ancestors``."""
    for node in reversed(ancestors):
        if isinstance(node, cst.SimpleStatementLine):
            return node
    return None


def _and_operands(test: cst.CSTNode):
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _and_operands(test.left)
        yield from _and_operands(test.right)
    else:
        yield test


def _plain(test: cst.CSTNode) -> bool:
    """A test that can be repeated where each use of the type was: names, attributes, and, or, not, comparisons."""
    return all(isinstance(n, _PLAIN) or type(n) in TRIVIA for n in subtree(test))


def _key(node: cst.CSTNode) -> str | None:
    """``cuda`` or ``args.cuda``: how a flag is named; None for anything else."""
    return code_of(node) if isinstance(node, (cst.Name, cst.Attribute)) else None


def _named_value(node: cst.CSTNode, ancestors) -> bool:
    """Whether ``node`` is the value of ``name = node`` (the names bound to a type are planned by name)."""
    parent = ancestors[-1] if ancestors else None
    return (
        isinstance(parent, cst.Assign)
        and parent.value is node
        and len(parent.targets) == 1
        and isinstance(parent.targets[0].target, cst.Name)
    )


def _guarding_checks(node, ancestors):
    """The operands of the tests whose true branch holds ``node``: ``cuda`` in ``if cuda: ... node ...``."""
    below = node
    for ancestor in reversed(ancestors):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and below is ancestor.body:
            yield from _and_operands(ancestor.test)
        below = ancestor
