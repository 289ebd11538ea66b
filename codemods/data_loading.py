"""XLA3xx: data loading for XLA devices (the migration guide's "Data Loading" section)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from codemods.devices import (
    CPU_CHOICE, TORCH, XLA_DEVICE, chooses_cpu, code_of, cuda_choice, is_cuda_literal, names_device,
)
from migrate_xla.rule import (
    PL, SAFE, TORCH_XLA, Rule, children, drop_items, names_trigger, parse_expr, string_value, subtree,
)

PIN_OPTIONS = ("pin_memory", "pin_memory_device")


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"


def _is_pin_memory_arg(arg: cst.Arg) -> bool:
    return arg.keyword is not None and arg.keyword.value in PIN_OPTIONS


def _is_pin_memory_entry(element: cst.BaseDictElement) -> bool:
    return isinstance(element, cst.DictElement) and string_value(element.key) in PIN_OPTIONS


def _is_pin_memory_call(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "pin_memory"
        and not node.args
    )


class PinMemory(Rule):
    """Pinned host memory is a CUDA transfer optimisation; there is nothing to pin on XLA.

    ``tensor.pin_memory()`` crashes without a GPU ("Found no NVIDIA driver"), and
    ``DataLoader(pin_memory=True)`` only warns that no accelerator was found. Host to
    device copies on XLA are overlapped by ``pl.MpDeviceLoader`` instead (guide, "Data
    Loading"; XLA302 puts it in). So ``.pin_memory()`` calls are dropped (a statement
    left with nothing to do, ``x = x.pin_memory()``, goes with them), and ``pin_memory``
    (with its ``pin_memory_device``) arguments and loader-option dict entries are
    removed. ``pin_memory=False`` already pins nothing and is left as written.

    ``non_blocking=True`` is kept, everywhere: ``Tensor.to`` accepts it on every device,
    on XLA it changes nothing (a copy to the device only records data for the next
    graph), and XLA103 keeps it when it turns ``.cuda(non_blocking=True)`` into
    ``.to(device, non_blocking=True)``; removing it would be churn with no effect. It
    disappears only with the ``.to(device)`` calls XLA302 removes.
    """

    CODE = "XLA301"
    NAME = "pin-memory"
    SUMMARY = "pin_memory=True and .pin_memory() are dropped (nothing to pin on XLA)"
    FIX = SAFE
    TRIGGERS = (r"pin_memory",)
    BEFORE = (
        "loader = DataLoader(ds, batch_size=64, pin_memory=True)\n"
        "kwargs = {'num_workers': 1, 'pin_memory': True}\n"
        "x = x.pin_memory()\n"
        "y = y.pin_memory().to(device, non_blocking=True)\n"
    )
    AFTER = (
        "loader = DataLoader(ds, batch_size=64)\n"
        "kwargs = {'num_workers': 1}\n"
        "y = y.to(device, non_blocking=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if _is_pin_memory_call(updated):
            return self.replace(
                original, updated, updated.func.value, "`.pin_memory()` dropped: nothing to pin on XLA"
            )
        if not self._pins(original.args, _is_pin_memory_arg):
            return updated
        replacement = updated.with_changes(args=drop_items(updated.args, _is_pin_memory_arg))
        return self.replace(
            original, updated, replacement, "`pin_memory=` removed: nothing to pin on XLA"
        )

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if not self._pins(original.elements, _is_pin_memory_entry):
            return updated
        replacement = updated.with_changes(elements=drop_items(updated.elements, _is_pin_memory_entry))
        return self.replace(
            original, updated, replacement, "`'pin_memory'` option removed: nothing to pin on XLA"
        )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        # `x = x.pin_memory()` would be left as `x = x`: the statement goes (its finding stays)
        if (
            self.fixing
            and len(original.targets) == 1
            and _is_pin_memory_call(original.value)
            and code_of(original.value.func.value) == code_of(original.targets[0].target)
        ):
            return cst.RemoveFromParent()
        return updated

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        # a bare `x.pin_memory()` statement returned a pinned copy nobody kept
        if self.fixing and _is_pin_memory_call(original.value):
            return cst.RemoveFromParent()
        return updated

    def _pins(self, items, is_pin_option) -> bool:
        """Whether ``items`` (original arguments or dict elements) ask for pinned memory.

        ``pin_memory=False`` alone does not. When they do, the fixes made inside the
        values about to be dropped (``pin_memory=torch.cuda.is_available()``) are forgotten.
        """
        values = [item.value for item in items if is_pin_option(item)]
        if not values or (len(values) == 1 and _is_false(values[0])):
            return False
        for value in values:
            self.ctx.forget_fixes_inside(value)
        return True


# -- XLA302: the loader of a loop that moves its batches becomes an MpDeviceLoader -------

LOADER_NAME = re.compile(r"loader|(^|_)dl$", re.IGNORECASE)
ON_DEVICE_ALREADY = re.compile(r"device|xla|^mp_|^para", re.IGNORECASE)  # device_loader, mp_loader, para_loader
DEVICE_NAME = re.compile(r"(^|_)dev$", re.IGNORECASE)
DATALOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
DEVICE_LOADERS = (
    "torch_xla.distributed.parallel_loader.MpDeviceLoader",
    "torch_xla.distributed.parallel_loader.ParallelLoader",
)
# What BatchMoveProof learns from beyond the loop it judges: the names bound to loaders.
BATCH_MOVE_CONTEXT = names_trigger(*DATALOADERS, *DEVICE_LOADERS)


def _names_in(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Every Name that refers to a variable: not ``.attr`` names, not ``keyword=`` names."""
    if isinstance(node, cst.Name):
        yield node
    elif isinstance(node, cst.Attribute):
        yield from _names_in(node.value)
    elif isinstance(node, cst.Arg):
        yield from _names_in(node.value)
    else:
        for child in children(node):
            yield from _names_in(child)


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
    if isinstance(node, cst.Assign):
        yield from (t.target for t in node.targets)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor)):
        yield node.target
    elif isinstance(node, cst.AsName):
        yield node.name
    for child in children(node):
        yield from _bindings_in(child)


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
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
        and node.func.value == "enumerate" and "enumerate" not in ctx.aliases
    )


def _first_arg(call: cst.Call) -> cst.Arg | None:
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0]
    return None


@dataclass
class _LoopPlan:
    """How one ``for`` loop over a DataLoader is migrated, decided on the original tree."""

    loader: cst.BaseExpression
    device: str  # the device expression the loader is given, as code
    guessed: bool  # the loader was recognised by its name only
    moves: set[int] = field(default_factory=set)  # ids of the `.to(device)` calls that go
    removals: set[int] = field(default_factory=set)  # ids of the assignments left with nothing to do


class MpDeviceLoaderAtLoop(Rule):
    """A loop that moves each batch to the device iterates ``pl.MpDeviceLoader(loader, device)``.

    Guide, "Data Loading": ``MpDeviceLoader`` copies the next batches to the device in a
    background thread while the current step runs, and yields them on the device.

    Where the wrapping goes: at the loop, ``for x, y in pl.MpDeviceLoader(loader,
    device):`` (inside ``enumerate(...)`` or ``tqdm(...)`` when the loop has them), not
    where the loader is built. The loader variable stays the plain DataLoader, so
    ``len(loader)``, ``loader.dataset``, ``loader.sampler`` and ``sampler.set_epoch(epoch)``
    keep working untouched, and loops that must see CPU batches are not affected.

    When the ``.to(device)`` calls go, which is also when the loop is wrapped: only where
    it is provably the same tensors. The names bound by the loop target (``x, y``, or
    ``batch``; ``i, (x, y)`` with ``enumerate``) hold the loader's CPU batch until the
    loop body assigns them, and up to then every use of them must be a plain move,
    ``x.to(DEVICE)`` / ``x.to(device=DEVICE, non_blocking=...)`` / ``x.cuda(...)``, or
    ``batch[0].to(DEVICE)``, or ``batch = {k: v.to(DEVICE) for k, v in batch.items()}``;
    ``x, y = batch`` hands the watch on to ``x`` and ``y``. All moves go to one device
    (one expression, not reassigned in the loop; CUDA names and ``.cuda()`` mean
    ``torch_xla.device()``), and that expression is what the loader is given. Then no
    code ever saw the CPU tensors except to copy them to that device, so taking them from
    the MpDeviceLoader is the same. A move becomes its receiver; an assignment left as
    ``x = x`` or ``x, y = x, y`` is removed. A name the body never assigns must not be
    used after the loop (it would hold a device tensor where it held a CPU one). Any
    other use (``x.numpy()``, ``lengths`` kept on the CPU for ``pack_padded_sequence``,
    ``.to(device, dtype)``, a move under an ``if``) leaves the loop as it was: plain
    iteration with ``.to(device)`` is still correct on XLA, only slower.

    The loader is recognised by its binding in the file (``DataLoader(...)``) or by its
    name (``train_loader``, ``self.val_dl``; the diagnostic then says it guessed); names
    bound to an MpDeviceLoader or named like one (``device_loader``, ``mp_loader``) are
    left alone.

    Syncs: the MpDeviceLoader calls ``torch_xla.sync()`` before it hands out each batch
    (``PerDeviceLoader.next``, torch_xla 2.9) and once at the end. XLA201 still puts its
    sync after the optimizer step: the loader's sync then finds nothing pending and runs
    nothing, while without it a ``loss.item()`` logged after the step would compile and
    run the forward graph on its own (measured: 3 compilations instead of 2, 26 graph
    executions instead of 20 for 20 steps with 5 logged). So XLA201 needs no change. In
    evaluation loops the loader's sync cuts the graph at each batch, so metrics summed on
    the device do not build one graph over the whole epoch; where the body reads each
    batch with ``.item()`` (XLA202's concern), that sync also runs what the body left
    pending (``output``, ``pred``): one more graph, compiled once (fixtures/examples/
    mnist_cnn.py: 6 compilations for 2 or 3 epochs instead of 5, never growing).

    A script that may run on the CPU by the user's choice (a device chosen on a flag,
    ``torch.device("xla" if use_cuda else "cpu")``, a ``--device`` option, a device set to
    the CPU in an ``else``: ``devices.chooses_cpu``) iterates ``(pl.MpDeviceLoader(loader,
    device) if torch.device(device).type == "xla" else loader)``: an MpDeviceLoader on a
    CPU device fails (``Check failed: device.type() == at::kXLA``), and on the CPU the
    loader's batches are where the removed moves would have put them.

    Behaviour to know: the loader is read up to about 24 batches ahead in a thread, so a
    dataset whose items depend on state the loop changes sees the change later (as with
    ``num_workers > 0``); and batches come back with tuples as lists.
    """

    CODE = "XLA302"
    NAME = "mp-device-loader"
    SUMMARY = "loops that move batches to the device iterate pl.MpDeviceLoader(loader, device)"
    FIX = SAFE
    TRIGGERS = (r"\.to\(", r"\.cuda\(")
    REQUIRES = (r"""cuda|xla\.device|xla_device|['"]xla['"]""",)  # a script with none moves to the CPU (or to a device it is given); not `torch_xla.sync()` alone, which XLA201 adds
    CONTEXT = (BATCH_MOVE_CONTEXT, CPU_CHOICE)
    BEFORE = (
        "device = torch_xla.device()\n"
        "for data, target in train_loader:\n"
        "    data, target = data.to(device), target.to(device)\n"
        "    loss = loss_fn(model(data), target)\n"
    )
    AFTER = (
        "device = torch_xla.device()\n"
        "for data, target in pl.MpDeviceLoader(train_loader, device):\n"
        "    loss = loss_fn(model(data), target)\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.proof = BatchMoveProof(self)
        self.plans: dict[int, _LoopPlan] = {}
        self.moves: set[int] = set()
        self.removals: set[int] = set()
        self.may_run_on_cpu: bool | None = None  # found once a file, when a loop needs it

    def visit_Module(self, node: cst.Module) -> None:
        self.proof.module = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self.proof.learn_binding(node)

    def visit_For(self, node: cst.For) -> None:
        plan = self.proof.plan(node)
        if plan is not None:
            self.plans[id(node)] = plan
            self.moves |= plan.moves
            self.removals |= plan.removals

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) not in self.moves or not self.fixing:
            return updated
        self.ctx.forget_fixes_inside(original)  # XLA103's .cuda() or XLA102's "cuda" string in it
        return updated.func.value

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if id(original) not in self.removals or not self.fixing:
            return updated
        self.ctx.forget_fixes_inside(original)
        return cst.RemoveFromParent()

    def leave_For(self, original: cst.For, updated: cst.For):
        plan = self.plans.pop(id(original), None)
        if plan is None:
            return updated
        loader = code_of(plan.loader)
        guess = f" (`{loader}` taken for a DataLoader by its name)" if plan.guessed else ""
        moves = len(plan.moves)
        message = (
            f"`{loader}` -> `pl.MpDeviceLoader({loader}, {plan.device})`: batches arrive on the device, "
            f"copied while the previous step runs; {moves} move{'s' if moves > 1 else ''} of the batch "
            f"to the device removed{guess}"
        )
        imports = [PL, TORCH_XLA] if plan.device == XLA_DEVICE else [PL]
        on_cpu_too = plan.device != XLA_DEVICE and self._chooses_cpu()
        if on_cpu_too:
            message += (
                f"; only when `{plan.device}` is an XLA device: this script may run on the CPU "
                "(the user's choice), where MpDeviceLoader fails"
            )
            imports.append(TORCH)
        wrapped = self._wrap(updated.iter, parse_expr(plan.device), on_cpu_too)
        if isinstance(wrapped, cst.IfExp):
            wrapped = wrapped.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return self.replace(original, updated, updated.with_changes(iter=wrapped), message, imports=imports)

    def _chooses_cpu(self) -> bool:
        if self.may_run_on_cpu is None:
            self.may_run_on_cpu = self.proof.module is not None and chooses_cpu(self.proof.module, self.qualname)
        return self.may_run_on_cpu

    def _wrap(self, node: cst.BaseExpression, device: cst.BaseExpression, on_cpu_too: bool) -> cst.BaseExpression:
        """``node`` (the updated loop iterable) with the loader inside it wrapped.

        ``on_cpu_too``: the device may be the CPU, where the loader itself is iterated
        (its batches are on the CPU already, so the moves that went are not missed).
        """
        if self.proof.passes_items_through(node):  # enumerate(loader), tqdm(loader)
            first = node.args[0]
            inner = self._wrap(first.value, device, on_cpu_too)
            return node.with_changes(args=[first.with_changes(value=inner), *node.args[1:]])
        wrapper = cst.Call(
            func=parse_expr("pl.MpDeviceLoader"),
            args=[cst.Arg(node, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(device)],
        )
        if not on_cpu_too:
            return wrapper
        on_xla = parse_expr(f'torch.device({code_of(device)}).type == "xla"')
        return cst.IfExp(test=on_xla, body=wrapper, orelse=node)


class BatchMoveProof:
    """Decides, on the original tree, whether a loop's batches may come from an MpDeviceLoader.

    See ``MpDeviceLoaderAtLoop``: the loop's batch names are followed through the body;
    every use before they are reassigned must be a move to one device.
    """

    def __init__(self, rule: Rule) -> None:
        self.ctx = rule.ctx
        self.qualname = rule.qualname
        self.module: cst.Module | None = None
        self.dataloaders: set[str] = set()  # code of the names bound to DataLoader(...)
        self.device_loaders: set[str] = set()  # code of the names bound to MpDeviceLoader(...)

    def learn_binding(self, node: cst.Assign) -> None:
        value = node.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and self.qualname(value.func) is None:
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

    def plan(self, node: cst.For) -> _LoopPlan | None:
        if node.asynchronous is not None or node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
            return None
        found = self._loader_and_element(node.iter, node.target)
        if found is None:
            return None
        loader, element, guessed = found
        names = _bound_names(element)
        if names is None or len(set(names)) != len(names):
            return None
        plan = _LoopPlan(loader=loader, device="", guessed=guessed)
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

    def _follow(self, statement: cst.BaseStatement, watched: set[str], plan: _LoopPlan, devices: set[str]):
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

    def _dict_of_moves(self, assign: cst.Assign, watched, plan: _LoopPlan, devices: set[str]) -> bool:
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
            isinstance(items, cst.Call) and not items.args and isinstance(items.func, cst.Attribute)
            and items.func.attr.value == "items" and isinstance(items.func.value, cst.Name)
            and items.func.value.value == target.value
        ):
            return False
        key, item = pair
        move = value.value
        device = self._move_device(move)
        if not (
            isinstance(value.key, cst.Name) and value.key.value == key and device is not None
            and isinstance(move.func.value, cst.Name) and move.func.value.value == item
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
        """The device a plain move goes to, as code (``torch_xla.device()`` for CUDA), else None."""
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return None
        if any(a.star for a in call.args):
            return None
        keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if call.func.attr.value == "cuda":
            plain = set(keywords) <= {"device", "non_blocking"} and len(positional) <= 2
            return XLA_DEVICE if plain else None
        if call.func.attr.value != "to" or set(keywords) - {"device", "non_blocking"}:
            return None
        if len(positional) == 1 and "device" not in keywords:
            where = positional[0].value
        elif not positional and "device" in keywords:
            where = keywords["device"].value
        else:
            return None  # .to(device, dtype), .to(tensor), .to()
        if is_cuda_literal(where) or cuda_choice(where) is not None:
            return XLA_DEVICE
        if isinstance(where, cst.Call):
            name = self.qualname(where.func)
            if name == "torch_xla.device" and not where.args:
                return XLA_DEVICE
            if name == "torch.device" and where.args and is_cuda_literal(where.args[0].value):
                return XLA_DEVICE
            return None
        if isinstance(where, (cst.Name, cst.Attribute)) and self.qualname(where) is None:
            last = where.value if isinstance(where, cst.Name) else where.attr.value
            if names_device(last) or DEVICE_NAME.search(last):
                return code_of(where)
        return None

    def _mark_removal(self, assign: cst.Assign, watched: set[str], plan: _LoopPlan) -> None:
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
                isinstance(name, cst.Name) and name.value in watched and self._move_device(moved) is not None
                and isinstance(moved.func.value, cst.Name) and moved.func.value.value == name.value
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
        around = {id(s) for s in stack[(functions[-1] + 1 if functions else 0):] if isinstance(s, (cst.For, cst.While))}
        targets = {id(n) for t in _bindings_in(scope) for n in _target_names(t)}
        passed = [False]

        def read(node: cst.CSTNode, always: bool) -> bool:
            if node is loop:
                passed[0] = True
                return False
            if id(node) in targets:
                return False
            if isinstance(node, cst.Name):
                return node.value in names and (always or passed[0])
            if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not scope:
                own = {p.name.value for p in _params(node.params)}
                own |= {n.value for t in _bindings_in(node) for n in _target_names(t)}
                shared = {
                    item.name.value for g in subtree(node) if isinstance(g, (cst.Global, cst.Nonlocal))
                    for item in g.names if isinstance(item.name, cst.Name)
                }
                if names <= own - shared:
                    return False
                always = True
            always = always or id(node) in around
            return any(read(child, always) for child in children(node))

        return read(scope, False)
