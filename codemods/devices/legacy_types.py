"""XLA110: the pre-0.4 legacy typed tensors (``torch.cuda.FloatTensor(...)``, ``Tensor =
torch.cuda.FloatTensor if cuda else torch.FloatTensor``) become device-aware factories; an
availability flag that selects what cannot be converted stays off on XLA (on TorchTPU under
``--runtime torch-tpu``)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.devices.device_check import gpu_only_feature
from codemods.shared.device_values import (
    ON_RUNTIME,
    XLA_DEVICE,
    cuda_choice,
    is_cuda_literal,
    names_device,
)
from migrate_xla.rule import (
    CUDA_WORD,
    EQUAL,
    SAFE,
    TORCH,
    TRIVIA,
    FileContext,
    Rule,
    children,
    code_nodes,
    code_of,
    names_trigger,
    parse_expr,
    snippet,
    string_value,
    subclasses,
    subtree,
    words,
)

# The legacy type of each dtype, as torch.<name> (CPU) and torch.cuda.<name> (CUDA)
LEGACY_DTYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "ShortTensor": "int16",
    "IntTensor": "int32",
    "LongTensor": "int64",
    "BoolTensor": "bool",
}
CUDA_TYPES = {f"torch.cuda.{name}": name for name in LEGACY_DTYPES}
CPU_TYPES = {f"torch.{name}": name for name in LEGACY_DTYPES}
AVAILABILITY = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available"})
XLA_DEVICE_CALLS = frozenset({"torch_xla.device", "torch_xla.core.xla_model.xla_device"})
# What a legacy constructor's single argument is when it is data (torch.tensor), not a size (torch.empty)
DATA_NODES = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)
SIZE_METHODS = frozenset({"size", "numel", "dim", "__len__"})
SIZE_FUNCTIONS = frozenset({"len", "int", "torch.Size"})
# numpy functions that return a scalar (a size); any other numpy call, alone or in arithmetic, is data
NUMPY_SCALARS = frozenset({"prod", "sum", "mean", "max", "min", "argmax", "argmin", "size", "int64", "int32", "ndim"})
# What a file with anything to plan spells: a legacy type, or a name given an availability
# test (a flag; spanning lines, hence the bound): a test used in place is XLA104's alone, and
# planning a file is a walk of its whole tree (torch's own CUDA modules test in place a lot)
PLANNED = re.compile(
    r"(?:" + "|".join(LEGACY_DTYPES) + r")\b|^[ \t]*[\w.]+[ \t]*(?::[^=\n]*)?=(?!=)[\s\S]{0,200}?is_available", re.M
)
# ... and what it must spell as well for one of them to be CUDA's: a legacy type or availability
# test named through torch.cuda (torch.accelerator), which an attribute chain spells right
# before the name (cuda.FloatTensor, also in a type's string), and an import binds otherwise
_THROUGH_CUDA = r"|from\s+torch\.(?:cuda|accelerator)\s+import|(?:cuda|accelerator)\s+as\b"
RESOLVABLE = re.compile(
    r"(?:cuda|accelerator)\s*\.\s*(?:" + "|".join(LEGACY_DTYPES) + r"|is_available)\b" + _THROUGH_CUDA
)
LEGACY_RESOLVABLE = re.compile(r"(?:cuda|accelerator)\s*\.\s*(?:" + "|".join(LEGACY_DTYPES) + r")\b" + _THROUGH_CUDA)
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
_BINDING_FIELDS = (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName, cst.CompFor, cst.For)


def _why_off(flag: str, what: str, device: str = XLA_DEVICE) -> str:
    return (
        f"`{flag}` asks whether a GPU is there and leads to {what}, which still needs CUDA: `{flag}` is now "
        "`False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand "
        f"(`torch.empty/torch.tensor(..., dtype=..., device={device})`, `x.to(device, dtype)`) "
        "and restore the check"
    )


class LegacyTensorType(Rule):
    """Legacy typed tensors (``torch.cuda.FloatTensor`` and its kind) become device-aware factories.

    Pre-0.4 code, still alive in much-copied GAN collections, picks a tensor type on a flag
    (``cuda = True if torch.cuda.is_available() else False``; ``Tensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor``) and builds with it:
    ``Tensor(n, 1)`` (a size), ``Tensor(np.random.normal(...))`` (data), ``x.type(Tensor)``.
    XLA105 makes the flag true on XLA, and the CUDA type then crashes ("Found no NVIDIA
    driver"). Following the migration guide's "Device Handling" (create tensors on the
    device, move them with ``.to(device)``), each use becomes a factory with the type's
    dtype on the XLA device: ``torch.empty(n, 1, dtype=torch.float32, device=...)`` for a
    size, ``torch.tensor(data, dtype=..., device=...)`` for data (a list, a tuple, a numpy
    array), ``x.to(device, dtype)`` for ``.type(...)``; an argument that may be either
    keeps the CPU constructor, ``torch.FloatTensor(arg).to(device)``. The device is the
    file's device variable where one holds the XLA device (``device = torch.device("cuda"
    if torch.cuda.is_available() else "cpu")``), else ``torch_xla.device()``; a choice on
    the user's own flag keeps its CPU branch (``torch_xla.device() if args.cuda else
    "cpu"``), one on ``t.is_cuda`` takes ``t.device``. The assignments of the type go, and
    so does a name bound to the type's name (``Tensor = FloatTensor``), converted with it.

    A rewrite that makes a check true on XLA must not route into code that still needs
    CUDA. Where a type cannot be converted (``isinstance(x, Tensor)``, passed on,
    ``set_default_tensor_type``), the availability flag that selects it or guards it becomes
    ``False`` where it is set (``cuda = False``; ``args.cuda = not args.no_cuda and False``),
    so the script runs on the CPU as on a machine without a GPU, with a TODO, and the types
    chosen on it keep their CPU branch; an availability test written in the choice itself
    becomes ``False`` there. A flag whose branch holds a CUDA-only feature (``DataParallel``,
    fused optimizers, CUDA graphs and streams, as XLA104 tells them) or that is passed as
    ``fused=`` / ``capturable=`` is ``False`` in that place only. A CUDA type the rule leaves
    is flagged by XLA899.

    Under ``--runtime torch-tpu`` the device is TorchTPU's, ``torch.device("tpu")``
    (``torch.empty(n, 1, dtype=torch.float32, device=torch.device("tpu"))``), and the flags
    left off stay off on TorchTPU: XLA105 makes the availability test ``torch.tpu.is_available()``.
    """

    CODE = "XLA110"
    NAME = "legacy-tensor-type"
    SUMMARY = "torch.cuda.FloatTensor-style legacy types become torch.empty/tensor(..., dtype, device) and .to()"
    FIX = SAFE
    SEVERITY = "warning"  # what stays: a flag left off, with the CUDA type it selects
    TRIGGERS = (
        names_trigger(*CUDA_TYPES),
        words("fused", "capturable", "data_parallel", "DataParallel", "CUDAGraph", "make_graphed_callables")
        + r"|graph_pool_handle|Stream\b|cuda\.graph\b",
    )
    REQUIRES = (CUDA_WORD,)
    CONTEXT = (words("is_available"),)  # the availability flags the checks and choices read
    BEFORE = (
        "import numpy as np\n"
        "cuda = True if torch.cuda.is_available() else False\n"
        "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "valid = Tensor(imgs.size(0), 1).fill_(1.0)\n"
        "z = Tensor(np.random.normal(0, 1, (64, 100)))\n"
        "real = imgs.type(Tensor)\n"
    )
    AFTER = (
        "import numpy as np\n"
        "cuda = True if torch.cuda.is_available() else False\n"
        "valid = torch.empty(imgs.size(0), 1, dtype=torch.float32, device=torch_xla.device()).fill_(1.0)\n"
        "z = torch.tensor(np.random.normal(0, 1, (64, 100)), dtype=torch.float32, device=torch_xla.device())\n"
        "real = imgs.to(torch_xla.device(), torch.float32)\n"
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: dict[int, tuple[str, str, str, str]] = {}  # call -> (kind, legacy name, device, what)
        self.type_calls: dict[int, tuple[str, str]] = {}  # x.type(T) -> (legacy name, device)
        self.removed: set[int] = set()  # assignments of a converted type
        self.flags_off: dict[int, str] = {}  # flag assignment -> why it is False
        self.tests_off: dict[int, str] = {}  # a flag's Name in a test, or an availability test -> why
        self.planned = False
        self.names = FileContext()
        self.roots: dict[str, cst.BaseExpression] = {}  # a type's name -> its value, when another name is bound to it

    # -- analysis of the whole file ----------------------------------------------------
    @classmethod
    def whole_module(cls, text: str, settings) -> bool:
        """A file whose text may need a plan is parsed whole: most such files are planned (12
        of 19 in torch's sources), and a plan needs the whole file (a slice would be parsed for nothing)."""
        return _may_plan(text, gpu_only_feature(settings.runtime).search(text))

    def visit_Module(self, node: cst.Module) -> None:
        self.planned = False
        text = self.ctx.source or code_of(node)
        features = gpu_only_feature(self.ctx.runtime).search(text)  # what an availability flag may guard
        if not _may_plan(text, features):
            return  # no legacy CUDA type and no availability flag to plan for: nothing to plan
        everything = list(code_nodes(node))
        # The plan is made before the traversal meets the imports: names resolve through the file's imports
        self.names = FileContext()
        for found in everything:
            if type(found) in (cst.Import, cst.ImportFrom):
                self.names.learn_import(found)
        # A reference to torch.cuda.FloatTensor or torch.cuda.is_available spells its last part, or
        # is a name an import bound to it: only those are resolved (qualname costs)
        wanted = {*LEGACY_DTYPES, "is_available"}
        wanted |= {name for name, full in self.names.aliases.items() if full in CUDA_TYPES or full in AVAILABILITY}
        if not any(
            (type(n) is cst.Name and n.value in wanted or type(n) is cst.Attribute and n.attr.value in wanted)
            and self._legacy_ref(n)
            or type(n) is cst.Call
            and (
                features
                and self._last_part(n.func) in wanted
                and self._availability_call(n)
                or self._string_type_call(n)
            )
            for n in everything
        ):
            return
        self.ctx.need_whole_module()
        self._plan(node, list(_walk(node)))

    @staticmethod
    def _last_part(node: cst.CSTNode) -> str | None:
        if type(node) is cst.Name:
            return node.value
        return node.attr.value if type(node) is cst.Attribute else None

    def qualname(self, node: cst.CSTNode) -> str | None:
        return self.names.qualname(node)

    def _legacy_ref(self, node: cst.CSTNode) -> str | None:
        """``FloatTensor`` for a reference to ``torch.cuda.FloatTensor``."""
        if type(node) in (cst.Attribute, cst.Name):
            return CUDA_TYPES.get(self.qualname(node) or "")
        return None

    def _cpu_ref(self, node: cst.CSTNode) -> str | None:
        if type(node) in (cst.Attribute, cst.Name):
            name = self.qualname(node) or ""
            return "FloatTensor" if name == "torch.Tensor" else CPU_TYPES.get(name)
        return None

    def _availability_call(self, node: cst.CSTNode) -> bool:
        return type(node) is cst.Call and self.qualname(node.func) in AVAILABILITY

    def _is_availability(self, value: cst.CSTNode) -> bool:
        """``torch.cuda.is_available()``, ``bool(...)`` of it, ``True if ... else False``."""
        if self._availability_call(value):
            return True
        if isinstance(value, cst.Call) and code_of(value.func) == "bool" and len(value.args) == 1:
            return self._is_availability(value.args[0].value)
        if isinstance(value, cst.IfExp):
            return (
                code_of(value.body) == "True" and code_of(value.orelse) == "False" and self._is_availability(value.test)
            )
        return False

    def _plan(self, module: cst.Module, nodes: list) -> None:
        self.planned = True
        bindings = _bindings(nodes)
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
            if all(any(map(self._availability_call, subtree(a.value))) for a in assigns)
            and all(v is not None for v, _ in bindings.get(key, ()))
        }
        # ... and those that are nothing else: on XLA they are always true
        flags = {key for key, assigns in available.items() if all(self._is_availability(a.value) for a in assigns)}
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
            legacy = self._legacy_ref(node)
            if legacy is None:
                if type(node) is cst.Call and self._string_type_call(node):
                    direct_types.append((node, ancestors, CUDA_TYPES[string_value(node.args[0].value)]))
                continue
            parent = ancestors[-1] if ancestors else None
            grand = ancestors[-2] if len(ancestors) > 1 else None
            if isinstance(parent, cst.Call) and parent.func is node:
                direct_calls.append((parent, ancestors[:-1], legacy))
            elif isinstance(parent, cst.Arg) and self._is_type_call(grand, parent):
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
                    elif self._availability_call(check):
                        self.tests_off[id(check)] = _why_off(
                            code_of(check), f"`{snippet(value)}` ({why})", self.ctx.api.device
                        )
        for node, ancestors in unconverted:
            for check in _guarding_checks(node, ancestors):
                if _key(check) in available:
                    off.setdefault(_key(check), f"`{snippet(node)}`")
                elif self._availability_call(check):
                    self.tests_off[id(check)] = _why_off(code_of(check), f"`{snippet(node)}`", self.ctx.api.device)
        for key, why in off.items():
            for assign in available[key]:
                if key in flags:
                    self.flags_off[id(assign)] = _why_off(key, why, self.ctx.api.device)
                else:  # args.cuda = not args.no_cuda and False
                    for call in filter(self._availability_call, subtree(assign.value)):
                        self.tests_off[id(call)] = _why_off(key, why, self.ctx.api.device)
        flags -= set(off)  # a flag set off is a choice like the user's own: its CPU branch stays
        for name, (why, calls, types) in self._named_plans(named, nodes, flags, devices, top).items():
            values = named[name]
            if why is None:
                self.calls.update(calls)
                self.type_calls.update(types)
                uses = [node for node, _ in nodes if id(node) in calls or id(node) in types]
                if not any(self.ctx.silenced(self.CODE, use) for use in uses):  # a use left as it is needs the name
                    self.removed.update(id(ancestors[-1]) for _, ancestors in values)
        for call, ancestors, legacy in direct_calls:
            kind = self._call_kind(call)
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

    def _is_type_call(self, call: cst.CSTNode | None, arg: cst.Arg) -> bool:
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "type"
            and bool(call.args)
            and call.args[0] is arg
            and arg.keyword is None
            and not arg.star
            and self.qualname(call.func) is None
        )

    def _string_type_call(self, call: cst.Call) -> bool:
        """``x.type("torch.cuda.FloatTensor")``."""
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "type" and call.args):
            return False
        first = call.args[0]
        return first.keyword is None and not first.star and string_value(first.value) in CUDA_TYPES

    def _legacy_value(self, value: cst.CSTNode) -> tuple[str, cst.BaseExpression | None, bool] | None:
        """(legacy name, the condition that selects CUDA or None, whether CUDA is the body) of a type value."""
        legacy = self._legacy_ref(value)
        if legacy is not None:
            return legacy, None, True
        if isinstance(value, cst.Name) and value.value in self.roots:
            return self._legacy_value(self.roots[value.value])
        if isinstance(value, cst.IfExp):
            for cuda, cpu, first in ((value.body, value.orelse, True), (value.orelse, value.body, False)):
                legacy = self._legacy_ref(cuda)
                if legacy is not None and self._cpu_ref(cpu) == legacy:
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
            if _binds(parent, node):
                continue
            grand = ancestors[-2] if len(ancestors) > 1 else None
            if isinstance(parent, cst.Call) and parent.func is node:
                kind = self._call_kind(parent)
                if kind is None:
                    return f"`{snippet(parent)}`", {}, {}
                uses.append((parent, kind, ancestors[:-1]))
            elif isinstance(parent, cst.Arg) and self._is_type_call(grand, parent):
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

    def _call_kind(self, call: cst.Call) -> str | None:
        """``empty`` (sizes), ``tensor`` (data), ``cpu`` (either: the CPU constructor, then moved), or None."""
        if any(a.keyword is not None or a.star == "**" for a in call.args):
            return None
        args = call.args
        if not args or len(args) > 1 or args[0].star:
            return "empty"
        value = args[0].value
        if isinstance(value, cst.Integer) or self._is_size(value):
            return "empty"
        if isinstance(value, DATA_NODES) or self._is_array(value):
            return "tensor"
        return "cpu"

    def _is_size(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute):
            return node.attr.value == "shape"
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in SIZE_METHODS:
                return True
            return (self.qualname(node.func) or code_of(node.func)) in SIZE_FUNCTIONS
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Multiply, cst.Add, cst.FloorDivide)
        ):
            return all(isinstance(n, cst.Integer) or self._is_size(n) for n in (node.left, node.right))
        return False

    def _is_array(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            name = self.qualname(node.func) or ""
            if name.startswith("numpy.") and name.rsplit(".", 1)[-1] not in NUMPY_SCALARS:
                return True
            if code_of(node.func) in ("list", "tuple"):
                return True
            return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("numpy", "tolist")
        if isinstance(node, cst.BinaryOperation):
            return self._is_array(node.left) or self._is_array(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self._is_array(node.expression)
        return False

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
                found.append((index, target.value, None if self._is_availability(test) else code_of(test)))
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
        if self._is_availability(cond) or test in flags:
            chosen = next((name for name, on in usable if on == test), None)
            return xla or chosen or device
        if not _plain(cond):
            return None
        chosen = next((name for name, on in usable if on == test), None)
        return chosen or f'{device} if {test} else "cpu"'

    # -- the rewrite -------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.planned:
            return updated
        if id(original) in self.tests_off:
            return self._off(original, updated)  # an availability test that selects a type left for CUDA
        plan = self.calls.get(id(original))
        if plan is not None:
            return self._factory(original, updated, *plan)
        typed = self.type_calls.get(id(original))
        if typed is None:
            return updated
        legacy, device = typed
        func = updated.func.with_changes(attr=cst.Name("to"))
        args = [
            cst.Arg(parse_expr(device), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            updated.args[0].with_changes(value=parse_expr(f"{self._torch()}.{LEGACY_DTYPES[legacy]}")),
            *updated.args[1:],
        ]
        replacement = updated.with_changes(func=func, args=args)
        self.ctx.forget_fixes_inside(original.args[0])
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: the legacy type's dtype, on the device",
            imports=self._imports(device),
            drop_if_unused=self.ctx.import_behind(original.args[0].value),
        )

    def _factory(self, original: cst.Call, updated: cst.Call, kind: str, legacy: str, device: str, shown: str):
        if kind == "cpu":
            inner = updated.with_changes(func=parse_expr(f"{self._torch()}.{legacy}"))
            replacement = cst.Call(
                func=cst.Attribute(value=inner, attr=cst.Name("to")), args=[cst.Arg(parse_expr(device))]
            )
            why = "a size or data: the CPU constructor, then moved"
        else:
            args = list(updated.args) or [cst.Arg(cst.Integer("0"))]
            replacement = updated.with_changes(func=parse_expr(f"{self._torch()}.{kind}"), args=args)
            replacement = _append(replacement, "dtype", parse_expr(f"{self._torch()}.{LEGACY_DTYPES[legacy]}"))
            replacement = _append(replacement, "device", parse_expr(device))
            why = "a size" if kind == "empty" else "data"
        self.ctx.forget_fixes_inside(original.func)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{shown}` -> `{snippet(replacement)}` ({why}): the legacy type's dtype, on the device",
            imports=self._imports(device),
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _torch(self) -> str:
        """The file's name for torch (``t`` after ``import torch as t``)."""
        return self.names.binds("torch") or "torch"

    def _imports(self, device: str) -> list:
        imports = [TORCH] if self.names.binds("torch") is None else []
        api = self.ctx.api
        return [*imports, *(i for i in api.imports if i not in imports)] if api.device in device else imports

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not self.planned:
            return updated
        if id(original) in self.removed:
            if self.fixes(original):
                self.ctx.forget_fixes_inside(original)  # XLA104's .is_xla in the choice goes with it
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                f"`{snippet(original)}`: every use of the legacy type was converted; removed",
                drop_if_unused=[spec for ref in _type_refs(original.value) for spec in self.ctx.import_behind(ref)],
            )
        why = self.flags_off.get(id(original))
        if why is None:
            return updated
        self.flag(original, why)
        if self.fixes(original):
            self.ctx.forget_fixes_inside(original.value)  # XLA105's torch_xla.device_count() goes with it
        value = self.replace(original.value, updated.value, cst.Name("False"), f"`{snippet(original)}` -> `False`")
        return updated.with_changes(value=value)

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if not self.planned or id(original) not in self.tests_off:
            return updated
        return self._off(original, updated)

    leave_Attribute = leave_Name  # if args.cuda: ... DataParallel

    def _off(self, original: cst.BaseExpression, updated: cst.BaseExpression):
        self.flag(original, self.tests_off[id(original)])
        if self.fixes(original):
            self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            cst.Name("False", lpar=updated.lpar, rpar=updated.rpar),
            f"`{snippet(original)}` -> `False`",
        )


def _type_refs(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The types a value names: both branches of a choice, or the value."""
    return [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]


def _append(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    new = cst.Arg(value, keyword=cst.Name(keyword), equal=EQUAL)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new])


def _may_plan(text: str, features: re.Match | None) -> bool:
    """Whether the file ``text`` may have anything to plan: a legacy CUDA type or an availability
    flag, named through torch.cuda; without a legacy type, availability flags are planned only
    for the GPU-only features they may guard or be passed as (_features_off: ``fused=cuda``),
    which the text then spells (``features``: the first of them)."""
    return bool(PLANNED.search(text) and (RESOLVABLE if features else LEGACY_RESOLVABLE).search(text))


def _walk(node: cst.CSTNode):
    """(node, its ancestors) for ``node`` and every node below it but layout (``code_nodes``), in code order."""
    stack = [(node, ())]
    while stack:
        item = stack.pop()
        yield item
        node, ancestors = item
        below = [child for child in children(node) if type(child) not in TRIVIA]
        if below:  # the ancestors of a node's children, made once for them all
            within = (*ancestors, node)
            below.reverse()
            stack.extend([(child, within) for child in below])


def _binds(parent: cst.CSTNode, name: cst.Name) -> bool:
    """Whether ``name`` under ``parent`` is bound or is not a reference (an attribute's, a keyword's name)."""
    if isinstance(parent, cst.AssignTarget) and parent.target is name:
        return True
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return True
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return True
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and parent.target is name:
        return True
    return isinstance(parent, _BINDING_FIELDS) and (
        getattr(parent, "name", None) is name or getattr(parent, "target", None) is name
    )


def _bindings(nodes) -> dict[str, list[tuple[cst.CSTNode | None, tuple]]]:
    """Every name's bindings in the file: (the value assigned, or None when not a plain assignment; ancestors)."""
    found: dict[str, list] = {}
    for node, ancestors in nodes:
        if type(node) not in _BINDERS:
            continue  # most nodes
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    found.setdefault(target.target.value, []).append((node.value, (*ancestors, node)))
                else:
                    for inner in _names_in(target.target):
                        found.setdefault(inner, []).append((None, ()))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            for inner in _names_in(node.target):
                found.setdefault(inner, []).append((None, ()))
        elif isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            found.setdefault(node.name.value, []).append((None, ()))
        elif isinstance(node, cst.AsName) and isinstance(node.name, cst.Name):
            found.setdefault(node.name.value, []).append((None, ()))
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            found.setdefault(code_of(node.name).split(".")[0], []).append((None, ()))
    return found


_BINDERS = subclasses(
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.NamedExpr,
    cst.For,
    cst.CompFor,
    cst.Param,
    cst.FunctionDef,
    cst.ClassDef,
    cst.AsName,
    cst.ImportAlias,
)


def _names_in(target: cst.CSTNode) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _names_in(element.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


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
