"""What a file's expressions are to XLA110 (legacy_types.py), as its imports resolve them.

The legacy types and their dtypes, what a file must spell for XLA110 to plan anything
(``may_plan``), which references are a CUDA legacy type, its CPU type or an availability
test, whether a constructor's argument is a size or data, and every name's bindings: what
legacy_type_plan.py reads a file with."""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule.api import TRIVIA, FileContext, children, code_of, string_value, subclasses

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
_BINDING_FIELDS = (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName, cst.CompFor, cst.For)


class LegacyTypeNames:
    """What an expression of the file names, through the file's imports (``names``, learned
    before the traversal meets them): a legacy type, an availability test, a size or data."""

    def __init__(self) -> None:
        self.names = FileContext()

    def qualname(self, node: cst.CSTNode) -> str | None:
        return self.names.qualname(node)

    def legacy_ref(self, node: cst.CSTNode) -> str | None:
        """``FloatTensor`` for a reference to ``torch.cuda.FloatTensor``."""
        if type(node) in (cst.Attribute, cst.Name):
            return CUDA_TYPES.get(self.qualname(node) or "")
        return None

    def cpu_ref(self, node: cst.CSTNode) -> str | None:
        if type(node) in (cst.Attribute, cst.Name):
            name = self.qualname(node) or ""
            return "FloatTensor" if name == "torch.Tensor" else CPU_TYPES.get(name)
        return None

    def availability_call(self, node: cst.CSTNode) -> bool:
        return type(node) is cst.Call and self.qualname(node.func) in AVAILABILITY

    def is_availability(self, value: cst.CSTNode) -> bool:
        """``torch.cuda.is_available()``, ``bool(...)`` of it, ``True if ... else False``."""
        if self.availability_call(value):
            return True
        if isinstance(value, cst.Call) and code_of(value.func) == "bool" and len(value.args) == 1:
            return self.is_availability(value.args[0].value)
        if isinstance(value, cst.IfExp):
            return (
                code_of(value.body) == "True" and code_of(value.orelse) == "False" and self.is_availability(value.test)
            )
        return False

    def is_type_call(self, call: cst.CSTNode | None, arg: cst.Arg) -> bool:
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

    def string_type_call(self, call: cst.Call) -> bool:
        """``x.type("torch.cuda.FloatTensor")``."""
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "type" and call.args):
            return False
        first = call.args[0]
        return first.keyword is None and not first.star and string_value(first.value) in CUDA_TYPES

    def call_kind(self, call: cst.Call) -> str | None:
        """``empty`` (sizes), ``tensor`` (data), ``cpu`` (either: the CPU constructor, then moved), or None."""
        if any(a.keyword is not None or a.star == "**" for a in call.args):
            return None
        args = call.args
        if not args or len(args) > 1 or args[0].star:
            return "empty"
        value = args[0].value
        if isinstance(value, cst.Integer) or self.is_size(value):
            return "empty"
        if isinstance(value, DATA_NODES) or self.is_array(value):
            return "tensor"
        return "cpu"

    def is_size(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute):
            return node.attr.value == "shape"
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in SIZE_METHODS:
                return True
            return (self.qualname(node.func) or code_of(node.func)) in SIZE_FUNCTIONS
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Multiply, cst.Add, cst.FloorDivide)
        ):
            return all(isinstance(n, cst.Integer) or self.is_size(n) for n in (node.left, node.right))
        return False

    def is_array(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            name = self.qualname(node.func) or ""
            if name.startswith("numpy.") and name.rsplit(".", 1)[-1] not in NUMPY_SCALARS:
                return True
            if code_of(node.func) in ("list", "tuple"):
                return True
            return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("numpy", "tolist")
        if isinstance(node, cst.BinaryOperation):
            return self.is_array(node.left) or self.is_array(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self.is_array(node.expression)
        return False


def may_plan(text: str, features: re.Match | None) -> bool:
    """Whether the file ``text`` may have anything to plan: a legacy CUDA type or an availability
    flag, named through torch.cuda; without a legacy type, availability flags are planned only
    for the GPU-only features they may guard or be passed as (``fused=cuda``: legacy_type_plan.py),
    which the text then spells (``features``: the first of them)."""
    return bool(PLANNED.search(text) and (RESOLVABLE if features else LEGACY_RESOLVABLE).search(text))


def walk(node: cst.CSTNode):
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


def binds(parent: cst.CSTNode, name: cst.Name) -> bool:
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


def bindings_of(nodes) -> dict[str, list[tuple[cst.CSTNode | None, tuple]]]:
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
