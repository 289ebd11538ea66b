"""Whether a loop's batches may come from an MpDeviceLoader: ``BatchMoveProof``.

The batch names of a ``for`` loop over a DataLoader are followed through its body; every
use before they are reassigned must be a move to one device. XLA302 (data_loading.py)
wraps the loops it proves; XLA203 (lazy_execution) knows from it which evaluation loops
XLA302 wraps, since an MpDeviceLoader syncs by itself."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from codemods.shared.device_values import cuda_choice, is_cuda_literal, names_device
from codemods.shared.run_time_configs import reads_run_time_config
from codemods.shared.training_loops import DATALOADERS
from migrate_xla.rule.api import TRIVIA, Rule, children, code_nodes, code_of, names_trigger, subtree

LOADER_NAME = re.compile(r"loader|(^|_)dl$", re.IGNORECASE)
ON_DEVICE_ALREADY = re.compile(r"device|xla|^mp_|^para", re.IGNORECASE)  # device_loader, mp_loader, para_loader
DEVICE_NAME = re.compile(r"(^|_)dev$", re.IGNORECASE)

DEVICE_LOADERS = (
    "torch_xla.distributed.parallel_loader.MpDeviceLoader",
    "torch_xla.distributed.parallel_loader.ParallelLoader",
)
# What BatchMoveProof learns from beyond the loop it judges: the names bound to loaders.
BATCH_MOVE_CONTEXT = names_trigger(*DATALOADERS, *DEVICE_LOADERS)


def _names_in(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Every Name that refers to a variable: not ``.attr`` names, not ``keyword=`` names."""
    stack = [node]
    while stack:
        node = stack.pop()
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.Name:
            yield node
        elif node_type is cst.Attribute or node_type is cst.Arg:
            stack.append(node.value)
        else:
            stack.extend([child for child in reversed(children(node)) if type(child) not in TRIVIA])


def _bound_names(target: cst.BaseExpression) -> list[str] | None:
    """The names a plain assignment target binds (``x``, ``x, y``), or None for other targets."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements
    ):
        return [e.value.value for e in target.elements]
    return None


def _bindings_in(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The targets of every binding inside ``node`` (assignments, loops, ``with ... as``, ``:=``)."""
    for inner in code_nodes(node):
        node_type = type(inner)
        if node_type is cst.Assign:
            yield from (t.target for t in inner.targets)
        elif node_type in _BINDING:
            yield inner.target
        elif node_type is cst.AsName:
            yield inner.name


_BINDING = frozenset({cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor})


def _params(params: cst.Parameters) -> list[cst.Param]:
    star = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return [*params.posonly_params, *params.params, *params.kwonly_params, *star]


def _target_names(target: cst.CSTNode) -> Iterator[cst.Name]:
    """The Names a binding target binds itself: ``x``, ``(i, (x, y))``, ``*rest``; not ``a.b``, ``a[0]``."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _is_enumerate(ctx, node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "enumerate"
        and "enumerate" not in ctx.aliases
    )


def _first_arg(call: cst.Call) -> cst.Arg | None:
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0]
    return None


@dataclass
class LoopPlan:
    """How one ``for`` loop over a DataLoader is migrated, decided on the original tree."""

    loader: cst.BaseExpression
    device: str  # the device expression the loader is given, as code
    guessed: bool  # the loader was recognised by its name only
    moves: set[int] = field(default_factory=set)  # ids of the `.to(device)` calls that go
    removals: set[int] = field(default_factory=set)  # ids of the assignments left with nothing to do


class BatchMoveProof:
    """Decides, on the original tree, whether a loop's batches may come from an MpDeviceLoader.

    See ``MpDeviceLoaderAtLoop``: the loop's batch names are followed through the body;
    every use before they are reassigned must be a move to one device.
    """

    def __init__(self, rule: Rule) -> None:
        self.ctx = rule.ctx
        self.qualname = rule.ctx.qualname  # not the rule's own method: the rule holds this proof
        self.module: cst.Module | None = None
        self.dataloaders: set[str] = set()  # code of the names bound to DataLoader(...)
        self.device_loaders: set[str] = set()  # code of the names bound to MpDeviceLoader(...)

    def learn_binding(self, node: cst.Assign) -> None:
        value = node.value
        while (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and self.qualname(value.func) is None
        ):
            value = value.func.value  # pl.ParallelLoader(...).per_device_loader(device)
        name = self.qualname(value.func) if isinstance(value, cst.Call) else None
        for target in node.targets:
            if name in DATALOADERS:
                self.dataloaders.add(code_of(target.target))
            elif name in DEVICE_LOADERS:
                self.device_loaders.add(code_of(target.target))

    def passes_items_through(self, node: cst.CSTNode) -> bool:
        """``enumerate(loader)``, ``tqdm(loader)``: the loop still iterates the loader's batches."""
        return _is_enumerate(self.ctx, node) or (
            isinstance(node, cst.Call) and (self.qualname(node.func) or "").split(".")[0] == "tqdm"
        )

    def plan(self, node: cst.For) -> LoopPlan | None:
        if node.asynchronous is not None or node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
            return None
        found = self._loader_and_element(node.iter, node.target)
        if found is None:
            return None
        loader, element, guessed = found
        names = _bound_names(element)
        if names is None or len(set(names)) != len(names):
            return None
        plan = LoopPlan(loader=loader, device="", guessed=guessed)
        watched = set(names)  # names that hold the loader's CPU tensors
        devices: set[str] = set()
        for statement in node.body.body:
            watched = self._follow(statement, watched, plan, devices)
            if watched is None:
                return None
        if not plan.moves or len(devices) != 1:
            return None
        plan.device = devices.pop()
        if self._bound_in(node.body, plan.device):
            return None
        left_unassigned = watched - {"_"}
        if left_unassigned and self._used_outside(node, left_unassigned):
            return None
        return plan

    def iterates_device_loader(self, iterable: cst.BaseExpression) -> bool:
        """Whether a loop already takes its batches from an MpDeviceLoader (which syncs)."""
        if self.passes_items_through(iterable):
            first = _first_arg(iterable)
            return first is not None and self.iterates_device_loader(first.value)
        if isinstance(iterable, cst.Call):
            func = iterable.func
            per_device = isinstance(func, cst.Attribute) and func.attr.value == "per_device_loader"
            return per_device or self.qualname(func) in DEVICE_LOADERS
        if isinstance(iterable, (cst.Name, cst.Attribute)):
            last = iterable.value if isinstance(iterable, cst.Name) else iterable.attr.value
            return code_of(iterable) in self.device_loaders or bool(
                LOADER_NAME.search(last) and ON_DEVICE_ALREADY.search(last)
            )
        return False

    def _loader_and_element(self, iterable, target):
        """(loader expression, the target its items bind, whether guessed) or None."""
        if self.passes_items_through(iterable):
            first = _first_arg(iterable)
            if first is None:
                return None
            if not _is_enumerate(self.ctx, iterable):
                return self._loader_and_element(first.value, target)
            if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
                return None
            return self._loader_and_element(first.value, target.elements[1].value)
        if isinstance(iterable, cst.Call):
            return (iterable, target, False) if self.qualname(iterable.func) in DATALOADERS else None
        if not isinstance(iterable, (cst.Name, cst.Attribute)) or self.qualname(iterable) is not None:
            return None
        code = code_of(iterable)
        if code in self.device_loaders:
            return None
        if code in self.dataloaders:
            return iterable, target, False
        last = iterable.value if isinstance(iterable, cst.Name) else iterable.attr.value
        if LOADER_NAME.search(last) and not ON_DEVICE_ALREADY.search(last):
            return iterable, target, True
        return None

    def _follow(self, statement: cst.BaseStatement, watched: set[str], plan: LoopPlan, devices: set[str]):
        """The watched names after ``statement``, or None when it uses one other than to move it."""
        if not watched:
            return watched
        reads: list[cst.CSTNode] = [statement]
        rebound: set[str] = set()
        if isinstance(statement, cst.SimpleStatementLine):
            reads = []
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    bound = _bound_names(small.targets[0].target)
                    if bound is not None:
                        handed_on = self._unpacked(small, watched)
                        if handed_on:  # x, y = batch
                            watched = watched | set(bound)
                            continue
                        if self._dict_of_moves(small, watched, plan, devices):
                            rebound |= set(bound)
                            continue
                        reads.append(small.value)
                        rebound |= set(bound)
                        self._mark_removal(small, watched, plan)
                        continue
                reads.append(small)
        receivers: set[int] = set()
        for read in reads:
            for call in self._moves_in(read, watched, devices):
                plan.moves.add(id(call))
                receivers |= {id(n) for n in _names_in(call.func.value)}
        for read in reads:
            if any(n.value in watched and id(n) not in receivers for n in _names_in(read)):
                return None
        if not isinstance(statement, cst.SimpleStatementLine):
            if any(n.value in watched for t in _bindings_in(statement) for n in _names_in(t)):
                return None  # assigned under a condition or in a nested loop: not followed
        return watched - rebound

    def _unpacked(self, assign: cst.Assign, watched: set[str]) -> bool:
        """``x, y = batch``: the batch's parts are watched in its place."""
        value = assign.value
        target = assign.targets[0].target
        return isinstance(value, cst.Name) and value.value in watched and isinstance(target, (cst.Tuple, cst.List))

    def _dict_of_moves(self, assign: cst.Assign, watched, plan: LoopPlan, devices: set[str]) -> bool:
        """``batch = {k: v.to(device) for k, v in batch.items()}``: a move of the whole batch."""
        target, value = assign.targets[0].target, assign.value
        if not (isinstance(target, cst.Name) and target.value in watched and isinstance(value, cst.DictComp)):
            return False
        loop = value.for_in
        pair = _bound_names(loop.target)
        if loop.ifs or loop.inner_for_in is not None or pair is None or len(pair) != 2:
            return False
        items = loop.iter
        if not (
            isinstance(items, cst.Call)
            and not items.args
            and isinstance(items.func, cst.Attribute)
            and items.func.attr.value == "items"
            and isinstance(items.func.value, cst.Name)
            and items.func.value.value == target.value
        ):
            return False
        key, item = pair
        move = value.value
        device = self._move_device(move)
        if not (
            isinstance(value.key, cst.Name)
            and value.key.value == key
            and device is not None
            and isinstance(move.func.value, cst.Name)
            and move.func.value.value == item
        ):
            return False
        devices.add(device)
        plan.moves.add(id(move))
        plan.removals.add(id(assign))
        return True

    def _moves_in(self, node: cst.CSTNode, watched: set[str], devices: set[str]) -> Iterator[cst.Call]:
        """The plain moves of watched tensors inside ``node``: ``x.to(device)``, ``batch[0].cuda()``."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            receiver = node.func.value
            if isinstance(receiver, cst.Subscript) and len(receiver.slice) == 1:
                index = receiver.slice[0].slice
                if isinstance(index, cst.Index) and isinstance(index.value, (cst.Integer, cst.SimpleString)):
                    receiver = receiver.value
            device = self._move_device(node)
            if isinstance(receiver, cst.Name) and receiver.value in watched and device is not None:
                devices.add(device)
                yield node
                return
        for child in children(node):
            yield from self._moves_in(child, watched, devices)

    def _move_device(self, call: cst.CSTNode) -> str | None:
        """The device a plain move goes to, as code (the run's device, ``torch_xla.device()``,
        for CUDA), else None."""
        device = self.ctx.api.device
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return None
        if any(a.star for a in call.args):
            return None
        keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if call.func.attr.value == "cuda":
            plain = set(keywords) <= {"device", "non_blocking"} and len(positional) <= 2
            return device if plain else None
        if call.func.attr.value != "to" or set(keywords) - {"device", "non_blocking"}:
            return None
        if len(positional) == 1 and "device" not in keywords:
            where = positional[0].value
        elif not positional and "device" in keywords:
            where = keywords["device"].value
        else:
            return None  # .to(device, dtype), .to(tensor), .to()
        if is_cuda_literal(where) or cuda_choice(where) is not None:
            return device
        if isinstance(where, cst.Call):
            name = self.qualname(where.func)
            if name == "torch_xla.device" and not where.args:  # written for PyTorch/XLA
                return device
            if name == "torch.device" and where.args and is_cuda_literal(where.args[0].value):
                return device
            return None
        if isinstance(where, (cst.Name, cst.Attribute)) and self.qualname(where) is None:
            if reads_run_time_config(self.ctx, where):
                return None  # cfg.device: XLA111 maps it at the move, which the loader would not see
            last = where.value if isinstance(where, cst.Name) else where.attr.value
            if names_device(last) or DEVICE_NAME.search(last):
                return code_of(where)
        return None

    def _mark_removal(self, assign: cst.Assign, watched: set[str], plan: LoopPlan) -> None:
        """``x = x.to(device)`` and ``x, y = x.to(device), y.to(device)`` go once the moves do."""
        target, value = assign.targets[0].target, assign.value
        pairs = [(target, value)]
        if isinstance(target, (cst.Tuple, cst.List)):
            if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(target.elements):
                return
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
            if any(isinstance(v, cst.StarredElement) for v in value.elements):
                return
        for name, moved in pairs:
            if not (
                isinstance(name, cst.Name)
                and name.value in watched
                and self._move_device(moved) is not None
                and isinstance(moved.func.value, cst.Name)
                and moved.func.value.value == name.value
            ):
                return
        plan.removals.add(id(assign))

    def _bound_in(self, body: cst.CSTNode, device: str) -> bool:
        """Whether the loop body assigns the device expression (or the name it starts from)."""
        root = re.match(r"\w+", device).group(0)
        return any(
            code_of(target) == device or root in {n.value for n in _target_names(target)}
            for target in _bindings_in(body)
        )

    def _used_outside(self, loop: cst.For, names: set[str]) -> bool:
        """Whether the loop's function (or module) may read ``names`` after the loop ran.

        Counted: reads after the loop in the source, reads anywhere in a loop around it,
        and reads in nested functions (called who knows when) that do not bind the name
        themselves. Plain rebinding (``for data in other_loader``, ``data = ...``) is no read.
        """
        stack = self.ctx.statements[:-1]
        functions = [i for i, s in enumerate(stack) if isinstance(s, cst.FunctionDef)]
        if not functions:
            self.ctx.need_whole_module()  # the module's code after the loop: a slice may leave it out
        scope = stack[functions[-1]] if functions else self.module
        if scope is None:
            return True
        around = {
            id(s) for s in stack[(functions[-1] + 1 if functions else 0) :] if isinstance(s, (cst.For, cst.While))
        }
        targets = {id(n) for t in _bindings_in(scope) for n in _target_names(t)}
        return _Reads(loop, names, scope, targets, around).inside(scope, False)


@dataclass
class _Reads:
    """The search of ``BatchMoveProof._used_outside``, in code order: a read of ``names``
    counts after ``loop`` has been passed, or anywhere ``always`` (in a loop around it, in a
    nested function). A class, not a nested function that calls itself: that would be a
    cycle (function -> closure cell -> function) holding the tree until the cyclic
    collector ran, and the migration runs with it off (run.py)."""

    loop: cst.For
    names: set[str]
    scope: cst.CSTNode
    targets: set[int]  # ids of the names that are assigned to (no read)
    around: set[int]  # ids of the loops around ``loop``
    passed: bool = False

    def inside(self, node: cst.CSTNode, always: bool) -> bool:
        if node is self.loop:
            self.passed = True
            return False
        if id(node) in self.targets:
            return False
        if isinstance(node, cst.Name):
            return node.value in self.names and (always or self.passed)
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not self.scope:
            own = {p.name.value for p in _params(node.params)}
            own |= {n.value for t in _bindings_in(node) for n in _target_names(t)}
            shared = {
                item.name.value
                for g in subtree(node)
                if isinstance(g, (cst.Global, cst.Nonlocal))
                for item in g.names
                if isinstance(item.name, cst.Name)
            }
            if self.names <= own - shared:
                return False
            always = True
        always = always or id(node) in self.around
        return any(self.inside(child, always) for child in children(node))
