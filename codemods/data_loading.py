"""XLA3xx: data loading for XLA devices (the migration guide's "Data Loading" section).

PyTorch/XLA only: under TorchTPU (``--runtime torch-tpu``) a DataLoader, pinned memory and
``.to(device)`` copies work as they did on CUDA, and these rules do not run.
"""

from __future__ import annotations

import libcst as cst

from codemods.shared.batch_moves import BATCH_MOVE_CONTEXT, BatchMoveProof, LoopPlan
from codemods.shared.device_values import CPU_CHOICE, XLA_DEVICE, chooses_cpu
from codemods.shared.walk import walked
from migrate_xla.rule.api import PL, SAFE, TORCH, TORCH_XLA, Rule, code_of, drop_items, parse_expr, string_value

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

    PyTorch/XLA only: TorchTPU registers a pinned host allocator for its device (the wheel's
    ``TpuPinnedAllocator``, set with ``at::setHostAllocator``), so pinning works there and speeds up
    host to device copies as it did on CUDA.
    """

    CODE = "XLA301"
    NAME = "pin-memory"
    SUMMARY = "pin_memory=True and .pin_memory() are dropped (nothing to pin on XLA)"
    FIX = SAFE
    TRIGGERS = (r"pin_memory",)  # pinned memory is for CUDA copies: it acts in any file that pins
    RUNTIMES = ("torch-xla",)
    BEFORE = (
        "loader = DataLoader(ds, batch_size=64, pin_memory=True)\n"
        "kwargs = {'num_workers': 1, 'pin_memory': True}\n"
        "x = x.pin_memory()\n"
        "y = y.pin_memory().to(device, non_blocking=True)\n"
    )
    AFTER = "loader = DataLoader(ds, batch_size=64)\nkwargs = {'num_workers': 1}\ny = y.to(device, non_blocking=True)\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if _is_pin_memory_call(updated):
            return self.replace(original, updated, updated.func.value, "`.pin_memory()` dropped: nothing to pin on XLA")
        if not self._pins(original.args, _is_pin_memory_arg):
            return updated
        replacement = updated.with_changes(args=drop_items(updated.args, _is_pin_memory_arg))
        return self.replace(original, updated, replacement, "`pin_memory=` removed: nothing to pin on XLA")

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if not self._pins(original.elements, _is_pin_memory_entry):
            return updated
        replacement = updated.with_changes(elements=drop_items(updated.elements, _is_pin_memory_entry))
        return self.replace(original, updated, replacement, "`'pin_memory'` option removed: nothing to pin on XLA")

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        # `x = x.pin_memory()` would be left as `x = x`: the statement goes (its finding stays)
        if (
            self.fixes(original.value)
            and len(original.targets) == 1
            and _is_pin_memory_call(original.value)
            and code_of(original.value.func.value) == code_of(original.targets[0].target)
        ):
            return cst.RemoveFromParent()
        return updated

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        # a bare `x.pin_memory()` statement returned a pinned copy nobody kept
        if _is_pin_memory_call(original.value) and self.fixes(original.value):
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

    PyTorch/XLA only: ``MpDeviceLoader`` is torch_xla's, and TorchTPU, which runs eagerly, copies
    each batch with ``.to(device)`` as CUDA does, from pinned memory where the loader pins it.
    """

    CODE = "XLA302"
    NAME = "mp-device-loader"
    SUMMARY = "loops that move batches to the device iterate pl.MpDeviceLoader(loader, device)"
    FIX = SAFE
    TRIGGERS = (r"\.to\(", r"\.cuda\(")
    REQUIRES = (
        r"""cuda|xla\.device|xla_device|'xla'|"xla"|'xla"|"xla'|accelerator""",  # literals: found with `in`
    )  # a script with none moves to the CPU (or to a device it is given); not `torch_xla.sync()` alone, which XLA201 adds
    RUNTIMES = ("torch-xla",)
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
        self.plans: dict[int, LoopPlan] = {}
        self.moves: set[int] = set()
        self.removals: set[int] = set()
        self.may_run_on_cpu: bool | None = None  # found once a file, when a loop needs it

    def visit_Module(self, node: cst.Module) -> None:
        self.proof.module = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self.proof.learn_binding(node)

    def visit_For(self, node: cst.For) -> None:
        plan = self.proof.plan(node)
        if plan is not None and not self.suppressed(node):  # the moves go only with the wrapped loader
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
            self.may_run_on_cpu = self.proof.module is not None and chooses_cpu(
                (node for node, _ in walked(self.ctx, self.proof.module)), self.qualname
            )
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
