"""XLA205: a tensor made on the device and then written one element at a time in a loop
piles every write into one pending graph; it is built on the host and moved once (the
migration guide's "Understanding Lazy Execution and Synchronization")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.device_values import device_tensor_names
from codemods.shared.statements import dotted, names_in
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import ON_ACCELERATOR, SAFE, Rule, code_nodes, code_of, snippet, words

FACTORY_NAMES = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like")
FACTORIES = {f"torch.{name}" for name in FACTORY_NAMES}
# what a loop that computes on the host calls besides torch's operations
HOST_MODULES = {"math", "numpy", "random", "cmath", "itertools"}
HOST_BUILTINS = {
    *("range", "len", "enumerate", "zip", "reversed", "sorted", "print", "divmod", "pow", "abs", "round"),
    *("int", "float", "bool", "str", "list", "tuple", "min", "max", "sum"),
}
HOST_METHODS = {"item", "tolist", "numpy", "append", "format"}
# the statement a subscript assignment makes in a loop: ``X[i] = v``, ``X[i, :] += v``, where a
# statement starts (a line, after ``;``, after the ``:`` of a one-line ``if``, ``with``...; an index
# over lines without nested brackets), not an annotated parameter's default (``mask: Optional[Tensor]
# = None``, which kept most of a typed library file in its slice); or a one-line loop's (``for i in
# r: X[i] = i``, which may open a slice's unit). Each led by characters ``re`` skips to.
_WRITE = r"\w+[ \t]*\[(?:[^\n]*|[^\]]*)\][ \t]*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)"
SUBSCRIPT_WRITE = r"[\n;][ \t]*(?:(?:for|while|if|elif|else|with)\b[^\n]*:[ \t]*)?" + _WRITE
ONE_LINE_LOOP_WRITE = r"(?:for|while)\b[^\n]*:[ \t]*" + _WRITE
DTYPE_WORDS = re.compile(r"dtype|float|int|long|half|double|bool|complex")
# what a statement that makes a tensor on the device spells
DEVICE_MADE = r"\.(?:to|cuda)\(|device[ \t]*="


class ElementWiseWrite(Rule):
    """A tensor made on the device and filled one element at a time is built on the host.

    Guide, "Understanding Lazy Execution": on XLA an operation on a device tensor only adds a
    node to the pending graph. A data set made on the device and filled in a Python loop,
    as course notebooks generate theirs (``X = torch.zeros(N * C, D).to(device)``, then
    ``X[ix] = ...`` for each of 3,000 points), adds a write a point, each with its index as a
    constant: the first use of ``X`` compiles one graph of thousands of operations
    (Atcold/NYU-DLSP20's spiral notebook: 15,000 pending operations, a 2.5-minute compile on
    2 CPU cores before the first training step, docs/realworld.md). The GPU ran the writes
    as they came.

    The fix makes the tensor on the host (the factory without its ``.to(device)``,
    ``.cuda()`` or ``device=``) and moves it once, after the loop (``X = X.to(device)``):
    the same values on the same device from there on. Applied where the loop (with the
    statements between, which must not name the tensor) uses the tensor only through
    subscripts, writes it at least once, does not train (no ``backward()``, no optimizer
    step) and computes on the host: it names nothing the file keeps on the device and calls
    nothing but torch's operations (without ``device=``), math, NumPy, random and builtins (no
    model, no function of the file's, whose results could be on the device). The writes then
    copy nothing from the device. The move after the loop is the one the
    making call had, as the other rules left it (``.to(torch_xla.device())``, ``.to("xla")``).

    PyTorch/XLA only: TorchTPU runs each write eagerly, as CUDA does.
    """

    CODE = "XLA205"
    NAME = "element-wise-write"
    SUMMARY = "a tensor made on the device and written element by element in a loop is built on the host and moved once"
    FIX = SAFE
    SEVERITY = "warning"
    TRIGGERS = (SUBSCRIPT_WRITE, ONE_LINE_LOOP_WRITE)
    # what the fix needs besides: a factory's call that puts its tensor on the device
    REQUIRES = (ON_ACCELERATOR, words(*FACTORY_NAMES), DEVICE_MADE)
    RUNTIMES = ("torch-xla",)
    CONTEXT = (DEVICE_MADE,)  # the statement that makes the tensor, next to the loop
    BEFORE = "X = torch.zeros(n, 2).to(device)\nfor i in range(n):\n    X[i] = torch.tensor(points[i])\n"
    AFTER = "X = torch.zeros(n, 2)\nfor i in range(n):\n    X[i] = torch.tensor(points[i])\nX = X.to(device)\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.module: cst.Module | None = None
        self.on_device: set[str] | None = None  # the names of device tensors, read when first needed
        self.plans: dict[int, tuple[str, cst.For]] = {}  # id(the making call) -> the name, the loop
        self.filled: dict[int, set[str]] = {}  # id(loop) -> the names of the tensors it fills
        self.moves: dict[int, list[tuple[cst.Call, str]]] = {}  # id(loop) -> (the making call, the move)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self._plan(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._plan(node.body)

    def _plan(self, body) -> None:
        for at, statement in enumerate(body):
            made = _made_on_device(statement)
            if made is None:
                continue
            name, call = made
            # the first statement after it that names the tensor: the loop that fills it
            loop = next((s for s in body[at + 1 :] if name in names_in(s)), None)
            if isinstance(loop, cst.For) and self._fills(loop, name):
                self.plans[id(call)] = (name, loop)
                self.filled.setdefault(id(loop), set()).add(name)

    def _fills(self, loop: cst.For, name: str) -> bool:
        """The loop writes ``name`` and uses it only through subscripts, and does not train."""
        if calls_training_step(loop) or name in names_in(loop.target):
            return False
        uses = [n for n in code_nodes(loop) if isinstance(n, cst.Name) and n.value == name]
        subscripted = {id(s.value) for s in code_nodes(loop) if isinstance(s, cst.Subscript)}
        writes = [
            assignment
            for assignment in code_nodes(loop.body)
            if isinstance(assignment, (cst.Assign, cst.AugAssign))
            for target in (assignment.targets if isinstance(assignment, cst.Assign) else [assignment])
            if isinstance(target.target, cst.Subscript) and dotted(target.target.value) == name
        ]
        return bool(writes) and all(id(use) in subscripted for use in uses)

    def _on_host(self, loop: cst.For) -> bool:
        """The loop computes on the host: it names nothing the file keeps on the device, and calls
        only torch's operations (no ``device=``), math, NumPy, random, builtins and the methods that
        read a host value (no model, no function of the file's)."""
        if self.on_device is None:  # read once a loop fills a tensor: the whole file's walk is rarely needed
            self.on_device = device_tensor_names(self.module)
        if names_in(loop) & (self.on_device - self.filled[id(loop)]):
            return False
        for call in code_nodes(loop):
            if not isinstance(call, cst.Call):
                continue
            func, qualname = call.func, self.qualname(call.func) or ""
            if qualname.startswith("torch."):
                if any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
                    return False
            elif qualname.partition(".")[0] not in HOST_MODULES and not (
                (isinstance(func, cst.Name) and func.value in HOST_BUILTINS)
                or (isinstance(func, cst.Attribute) and func.attr.value in HOST_METHODS)
            ):
                return False
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        plan = self.plans.pop(id(original), None)
        if plan is None or self.qualname(_factory(original).func) not in FACTORIES:  # known once the imports are
            return updated
        name, loop = plan
        moved_to = _moved_to(original)
        if moved_to is not None and _is_dtype(self.qualname(moved_to) or code_of(moved_to)):
            return updated
        if not self._on_host(loop):
            return updated
        move = f"{name} = {name}{_move_of(updated)}"  # as the other rules left the call (XLA102's "xla")
        self.moves.setdefault(id(loop), []).append((original, move))
        return self.replace(
            original,
            updated,
            _made_on_host(updated),
            f"`{snippet(original)}` makes `{name}` on the device and the loop `for {code_of(loop.target)} in ...` "
            f"after it writes it element by element: on XLA each write is an operation of one pending graph, "
            f"compiled at the first use of `{name}` (a graph as large as the writes are many); made on the host, "
            f"moved once after the loop (`{move}`)",
        )

    def leave_For(self, original: cst.For, updated: cst.For):
        moves = [_statement(move) for call, move in self.moves.pop(id(original), ()) if self.fixes(call)]
        return cst.FlattenSentinel([updated, *moves]) if moves else updated


def _statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code + "\n")


def _made_on_device(statement: cst.CSTNode) -> tuple[str, cst.Call] | None:
    """``X = torch.zeros(n, 2).to(device)``, ``X = torch.zeros(n, 2, device=device)`` or
    ``X = torch.zeros(n, 2).cuda()`` (by the factory's name: whether it is torch's is known
    once the imports are seen): the name, and the call that puts it on the device."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    target, call = assign.targets[0].target, assign.value
    if (
        not isinstance(target, cst.Name)
        or not isinstance(call, cst.Call)
        or _named(_factory(call).func) not in FACTORY_NAMES
    ):
        return None
    func = call.func
    if _factory(call) is not call:
        moved = (func.attr.value == "cuda" and not call.args) or (
            func.attr.value == "to" and len(call.args) == 1 and call.args[0].keyword is None
        )
    else:
        moved = any(a.keyword is not None and a.keyword.value == "device" for a in call.args)
    return (target.value, call) if moved else None


def _move_of(call: cst.Call) -> str:
    """What puts the tensor on the device, to write after the name: ``.to(device)``, ``.cuda()``."""
    if _factory(call) is not call:
        return code_of(call)[len(code_of(_factory(call))) :]
    return f".to({code_of(_moved_to(call))})"


def _moved_to(call: cst.Call) -> cst.CSTNode | None:
    """What the making call moves to: ``.to``'s argument, ``device=``; None for ``.cuda()``."""
    if _factory(call) is not call:
        return call.args[0].value if call.args else None
    return next(a.value for a in call.args if a.keyword is not None and a.keyword.value == "device")


def _is_dtype(spelled: str) -> bool:
    """``torch.float32``, ``torch.long``, a name like ``dtype``: a ``.to()`` that converts, not moves."""
    return spelled.startswith("torch.") and not spelled.startswith("torch.device") or bool(DTYPE_WORDS.search(spelled))


def _named(func: cst.BaseExpression) -> str | None:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def _factory(call: cst.Call) -> cst.Call:
    """The factory call of ``torch.zeros(...).to(device)``, or the call itself."""
    func = call.func
    return func.value if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) else call


def _made_on_host(call: cst.Call) -> cst.Call:
    """The factory call without what puts it on the device."""
    factory = _factory(call)
    if factory is not call:
        return factory.with_changes(lpar=call.lpar, rpar=call.rpar)
    args = [a for a in call.args if a.keyword is None or a.keyword.value != "device"]
    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
