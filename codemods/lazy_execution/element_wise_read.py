"""XLA204: a tensor read one element at a time on the host is one graph execution an
element; it is read once, with ``.tolist()`` (the migration guide's "Understanding Lazy
Execution and Synchronization")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.lazy_execution.common import NESTED_SCOPES
from migrate_xla.rule.api import ON_ACCELERATOR, SAFE, Rule, children, last_name, snippet, subclasses

CONVERSIONS = {"int", "float", "bool"}
# methods whose result is a tensor (or a NumPy array: .tolist() serves both); .cpu() gives a
# CPU tensor, cheap to read element by element; .max(dim)/.sort()/.topk() give tuples
TENSOR_METHODS = {
    "to",
    "view",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "argmax",
    "argmin",
    "argsort",
    "long",
    "int",
    "detach",
    "clone",
    "contiguous",
    "permute",
    "transpose",
    "t",
    "round",
    "float",
}
# torch functions that can return a tuple of tensors: a tensor only once indexed
TUPLE_RESULTS = {
    "max",
    "min",
    "topk",
    "sort",
    "split",
    "chunk",
    "unbind",
    "where",
    "nonzero",
    "unique",
    "meshgrid",
    "broadcast_tensors",
    "aminmax",
    "kthvalue",
    "median",
    "mode",
    "std_mean",
    "var_mean",
    "tensor_split",
}


class ElementWiseRead(Rule):
    """A tensor read one element at a time on the host is one graph execution an element.

    Guide, "Understanding Lazy Execution": every read of a value (``int(t)``,
    ``t.item()``) runs the pending graph that computes it. A comprehension over a tensor,
    ``''.join(itos[int(i)] for i in y)`` (how minGPT-style samplers decode tokens), reads
    ``y[0]``, ``y[1]``, ... one at a time: on XLA each is its own graph with the index
    baked in, compiled and run anew, and the graph that produced ``y`` runs again for every
    element. Measured on CPU PJRT with a 29-token sample: 29 compilations and minutes per
    sampling callback. ``y.tolist()`` copies the tensor to the host once; its elements are
    Python numbers, which ``int()``, ``float()``, ``bool()`` and indexing take as they took
    the 0-d tensors (``i.item()`` becomes ``i``).

    Fixed in comprehensions (and generator expressions) whose loop variable is only
    converted (``int(i)``, ``float(i)``, ``bool(i)``, ``i.item()``) or used as an index
    (``itos[i]``), over an expression that is a tensor by the file's own code: a ``torch``
    function's result, a tensor method of one, an element or slice of one, a name assigned
    one, or the result of a function of the same file that returns one.

    PyTorch/XLA only: under TorchTPU, which runs eagerly, each element read copies a value that
    is already computed, as it did on CUDA; no graph runs again.
    """

    CODE = "XLA204"
    NAME = "element-wise-read"
    SUMMARY = "a tensor read element by element in a comprehension becomes one .tolist()"
    FIX = SAFE
    SEVERITY = "warning"
    # a conversion of the loop variable before its `for` on the same line: a comprehension
    TRIGGERS = (
        r"(?:int|float|bool)\(\s*\w+\s*\)[^\n]*\bfor\s+\w+\s+in\b",
        r"\.item\(\)(?<=\w\.item\(\))[^\n]*\bfor\s+\w+\s+in\b",
    )
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    BEFORE = "y = logits.argmax(dim=-1)[0]\nprint(''.join(itos[int(i)] for i in y))\n"
    AFTER = "y = logits.argmax(dim=-1)[0]\nprint(''.join(itos[int(i)] for i in y.tolist()))\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scopes: list[cst.CSTNode] = []  # the module, then each enclosing function
        self._functions: dict[str, list[cst.FunctionDef]] | None = None  # found when first needed

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(node)

    @property
    def functions(self) -> dict[str, list[cst.FunctionDef]]:
        """The file's functions by name, in code order (a walk of the whole module: done only
        for a comprehension that reads a call's elements)."""
        if self._functions is None:
            self._functions = {}
            for found in _own_nodes(self.scopes[0], scoped=False):
                if isinstance(found, cst.FunctionDef):
                    self._functions.setdefault(found.name.value, []).append(found)
        return self._functions

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, original, updated):
        self.scopes.pop()
        return updated

    def leave_ListComp(self, original, updated):
        return self._comprehension(original, updated, ("elt",))

    def leave_SetComp(self, original, updated):
        return self._comprehension(original, updated, ("elt",))

    def leave_GeneratorExp(self, original, updated):
        return self._comprehension(original, updated, ("elt",))

    def leave_DictComp(self, original, updated):
        return self._comprehension(original, updated, ("key", "value"))

    def _comprehension(self, original, updated, parts: tuple[str, ...]):
        loop = original.for_in
        if not isinstance(loop.target, cst.Name):
            return updated
        name = loop.target.value
        used = [getattr(original, part) for part in parts] + [*(test.test for test in loop.ifs)]
        if loop.inner_for_in is not None:
            used.append(loop.inner_for_in)
        reads = [_element_reads(node, name) for node in used]
        if any(count is None for count in reads) or not any(reads):
            return updated
        # after the reads: whether the iterable is a tensor may walk the whole scope (_assigned)
        if not self._is_tensor(loop.iter, self.scopes[-1], 2, set()):
            return updated
        values = _ItemToValue(name)
        changes = {part: getattr(updated, part).visit(values) for part in parts}
        new_loop = updated.for_in.with_changes(
            iter=cst.Call(func=cst.Attribute(value=_attribute_ready(updated.for_in.iter), attr=cst.Name("tolist"))),
            ifs=[test.visit(values) for test in updated.for_in.ifs],
            inner_for_in=updated.for_in.inner_for_in.visit(values) if updated.for_in.inner_for_in else None,
        )
        what = snippet(loop.iter)
        return self.replace(
            original,
            updated,
            updated.with_changes(for_in=new_loop, **changes),
            f"iterating `{what}` reads the tensor one element at a time: on XLA each element is a graph of its "
            f"own, compiled and run anew; `{what}.tolist()` copies it to the host once",
        )

    # -- is it a tensor, by this file's own code? ----------------------------------------
    def _is_tensor(
        self, node: cst.BaseExpression, scope: cst.CSTNode, depth: int, seen: set, tuples: bool = False
    ) -> bool:
        """Whether ``node``, evaluated in ``scope``, is a tensor (or, with ``tuples``, a tuple
        of them); ``depth``: how many calls of the file's own functions to follow; ``seen``:
        the names already followed."""
        if isinstance(node, cst.Subscript):
            return self._is_tensor(node.value, scope, depth, seen, tuples=True)
        if isinstance(node, cst.Name):
            if (id(scope), node.value) in seen:  # x = x.to(device)
                return False
            seen.add((id(scope), node.value))
            if scope is self.scopes[0]:  # a function's own code is all in a slice, the module's may not be
                self.ctx.need_whole_module(node.value)
            values = _assigned(scope, node.value)  # every value the name takes in its scope
            return bool(values) and all(self._is_tensor(value, scope, depth, seen, tuples) for value in values)
        if not isinstance(node, cst.Call):
            return False
        function = re.fullmatch(r"torch\.(?:nn\.functional\.)?(\w+)", self.qualname(node.func) or "")
        if function:
            return tuples or function.group(1) not in TUPLE_RESULTS
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in TENSOR_METHODS:
            return True
        name = last_name(node.func)
        if depth <= 0 or not name:
            return False
        self.ctx.need_whole_module(name, defined=True)  # a tensor can come from a function defined anywhere in the file
        defined = self.functions.get(name, [])
        return bool(defined) and all(self._returns_tensor(f, depth - 1, seen, tuples) for f in defined)

    def _returns_tensor(self, function: cst.FunctionDef, depth: int, seen: set, tuples: bool) -> bool:
        returned = [n.value for n in _own_nodes(function.body) if isinstance(n, cst.Return) and n.value is not None]
        return bool(returned) and all(self._is_tensor(value, function, depth, seen, tuples) for value in returned)


# No statement is below an expression (a lambda's body is one): the walks for definitions,
# assignments and returns do not enter them.
_EXPRESSIONS = subclasses(cst.BaseExpression)


def _own_nodes(node: cst.CSTNode, scoped: bool = True):
    """The statements (and the nodes of their own that are not inside an expression) of a
    scope's own code, in code order: not those of functions, classes or lambdas in it; all
    of them, with ``scoped`` False."""
    stack = list(reversed(children(node)))
    while stack:
        found = stack.pop()
        yield found
        if type(found) not in _EXPRESSIONS and not (scoped and isinstance(found, NESTED_SCOPES)):
            stack.extend(reversed(children(found)))


def _assigned(scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """What ``name = ...`` assigns in the scope's own code."""
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    return [
        statement.value
        for statement in _own_nodes(body)
        if isinstance(statement, cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == name for t in statement.targets)
    ]


def _element_reads(node: cst.CSTNode, name: str) -> int | None:
    """How many times ``node`` reads ``name`` as a value (``int(name)``, ``name.item()``, an
    index ``x[name]``); None when it uses ``name`` any other way."""
    reads = 0
    stack = [node]
    while stack:
        found = stack.pop()
        if isinstance(found, cst.Call) and _is_conversion(found, name):
            reads += 1
            continue
        if (
            isinstance(found, cst.SubscriptElement)
            and isinstance(found.slice, cst.Index)
            and isinstance(found.slice.value, cst.Name)
            and found.slice.value.value == name
        ):
            continue
        if isinstance(found, cst.Attribute):
            stack.append(found.value)  # not its attribute's name
            continue
        if isinstance(found, cst.Arg):
            stack.append(found.value)  # not its keyword
            continue
        if isinstance(found, cst.Name) and found.value == name:
            return None
        stack.extend(children(found))
    return reads


def _is_conversion(call: cst.Call, name: str) -> bool:
    func = call.func
    if isinstance(func, cst.Name) and func.value in CONVERSIONS and len(call.args) == 1:
        value = call.args[0].value
        return (
            call.args[0].keyword is None
            and not call.args[0].star
            and isinstance(value, cst.Name)
            and value.value == name
        )
    return _is_item_of(call, name)


def _is_item_of(call: cst.Call, name: str) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "item"
        and not call.args
        and isinstance(func.value, cst.Name)
        and func.value.value == name
    )


class _ItemToValue(cst.CSTTransformer):
    """``name.item()`` -> ``name``: after ``.tolist()`` the element is a Python number."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def leave_Call(self, original, updated):
        return updated.func.value if _is_item_of(updated, self.name) else updated


def _attribute_ready(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` as the value of an attribute: in parentheses unless it binds tighter."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
