"""XLA611: a model in shared memory (``model.share_memory()``, Hogwild training by
``torch.multiprocessing`` workers) cannot run on XLA: flagged, with the data-parallel form."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from codemods.distributed.hogwild import ORDINAL, WORKER, HogwildPlan, hogwild_plan
from codemods.shared.launch_plan import launch_plan
from codemods.shared.training_loops import OPTIMIZER_NAME
from migrate_xla.rule.api import (
    GAP,
    ON_ACCELERATOR,
    TORCH_XLA,
    UNSAFE,
    XM,
    XR,
    Rule,
    code_nodes,
    code_of,
    last_name,
    parse_expr,
    snippet,
)

# What both rules act on: a call of ``.share_memory()`` without arguments; not the method's
# ``def share_memory(self)`` (torch's Module), for which both would parse the whole file
SHARE_MEMORY_CALL = rf"share_memory{GAP}\({GAP}\)"

# What starts worker processes that may share the model: qualified names, and the attribute
# that a multiprocessing context spells (``mp.get_context("spawn").Process``, ``ctx.Process``)
STARTERS = frozenset(
    {
        "torch.multiprocessing.Process",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.Pool",
        "multiprocessing.Process",
        "multiprocessing.Pool",
    }
)
DATA_PARALLEL = (
    "train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what "
    "`mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each "
    "with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP "
    f"over the `xla` process group, see {DDP_GUIDE}"
)
STAYS = (
    "the call is left as it is, and raises on the XLA device: a person decides what replaces it "
    "(removed alone, each worker would train its own copy of the model)"
)


# TorchTPU's words: the same training, one process per chip over its "tpu" process group
TPU_DATA_PARALLEL = (
    "train data parallel instead: one process per TPU chip (`mp.spawn` or torchrun), each with its own "
    'replica of the model, the gradients averaged by DDP over the `"tpu"` process group'
)

TPU_STAYS = (
    "the call is left as it is: a person decides what replaces it "
    "(removed alone, each worker would train its own copy of the model)"
)


def _why_tpu(call: str, workers: str | None) -> str:
    if workers is None:
        return (
            f"`{call}` is meant to put the module's tensors in shared memory for other processes: on TorchTPU's "
            "device it does nothing (torch shares only CPU storages), and processes cannot share "
            f"them, each being bound to its own chip; remove it (to train on several chips, {TPU_DATA_PARALLEL}; "
            f"{TPU_STAYS})"
        )
    return (
        f"`{call}` shares the model with the workers `{workers}` starts, which all update it (Hogwild): "
        "TorchTPU's tensors live in device memory, which processes cannot share (each is bound to its own chip), "
        f"so this training cannot run on TorchTPU; {TPU_DATA_PARALLEL}; {TPU_STAYS}"
    )


def _why(call: str, workers: str | None) -> str:
    if workers is None:
        return (
            f"`{call}` moves the module's tensors to shared memory for other processes: on the XLA device it "
            "raises (`_share_fd_: only available on CPU`), since processes cannot share XLA tensors; remove it "
            f"(to train on several devices, {DATA_PARALLEL}; {STAYS})"
        )
    return (
        f"`{call}` shares the model with the workers `{workers}` starts, which all update it (Hogwild): XLA "
        "tensors live on the device and processes cannot share them (`share_memory_()` raises "
        f"`_share_fd_: only available on CPU`), so this training cannot run on XLA; {DATA_PARALLEL}; {STAYS}"
    )


class SharedMemoryTraining(Rule):
    """A module put in shared memory (``model.share_memory()``) is flagged: it cannot be on XLA.

    Hogwild training (PyTorch's "Multiprocessing best practices") moves a model's tensors
    to shared memory and starts ``torch.multiprocessing.Process`` workers (or ``mp.spawn``,
    a ``Pool``) that each run an optimizer on the one model, without locks. Shared memory
    is host memory: ``share_memory_()`` of an XLA tensor raises ``_share_fd_: only
    available on CPU`` (measured on torch_xla 2.9, CPU PJRT: the migrated run dies there),
    and XLA devices are not shared between processes at all. PyTorch/XLA's form of
    training with several processes is data parallelism: one process per device, started
    by ``torch_xla.launch``, each with its own replica, gradients all-reduced
    (``xm.optimizer_step``, or DDP over the ``xla`` process group; the DDP guide). That is
    a different training algorithm (synchronous, averaged gradients; a batch split over
    the replicas), so this rule rewrites nothing: the call is flagged as an error, with what
    to write instead, and left as it is, since removing it alone would make each worker train
    its own copy. Under ``--unsafe-fixes`` XLA612 rewrites the common launch to that form;
    the error stays, at the launch, saying how the training changed, or, where XLA612 leaves
    the launch, saying why. ``Module.share_memory()`` is matched by shape (a call of
    ``.share_memory()`` without arguments); a tensor's ``share_memory_()`` is not flagged,
    since a host buffer the workers fill (a replay buffer, a counter) stays on the CPU and
    works.

    Both runtimes: under TorchTPU the model is in device memory too, which ``share_memory()``
    leaves where it is (torch shares only CPU storages) and no other process can reach (each is
    bound to its own chip); the finding says so, with one process per chip and DDP over the
    ``tpu`` process group.
    """

    CODE = "XLA611"
    NAME = "shared-memory-training"
    SUMMARY = "model.share_memory() (Hogwild training by multiprocessing workers) cannot run on XLA: flagged"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (SHARE_MEMORY_CALL,)
    REQUIRES = (ON_ACCELERATOR,)
    WHOLE_MODULE = True  # XLA612's plan: the launch, the `__main__` block, the workers
    BEFORE = (
        "import torch.multiprocessing as mp\n\nmodel.share_memory()\n"
        "workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]\n"
    )
    AFTER = (
        "import torch.multiprocessing as mp\n\n"
        f"# TODO(xla-migrate): XLA611 {_why('model.share_memory()', 'mp.Process')}\n"
        "model.share_memory()\nworkers = [mp.Process(target=train, args=(model,)) for _ in range(4)]\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.module: cst.Module | None = None
        self.workers: str | None = None  # how the file starts its worker processes, if it does
        self.looked = False

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.plan = _plan(self.ctx, node)

    def _find_workers(self) -> None:
        """At the first ``share_memory()``, when the imports above it are known."""
        self.looked = True
        for found in code_nodes(self.module) if self.module is not None else ():
            if isinstance(found, cst.Call) and self._starts_workers(found.func):
                self.workers = code_of(found.func)
                return

    def _starts_workers(self, func: cst.BaseExpression) -> bool:
        name = self.qualname(func)
        if name is not None:
            return name in STARTERS
        return isinstance(func, cst.Attribute) and func.attr.value == "Process"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "share_memory" and not node.args:
            if not self.looked:
                self._find_workers()
            if self.ctx.runtime != "torch-xla":
                self.flag(node, _why_tpu(snippet(node), self.workers))
            elif self.plan.problem is None and not self.ctx.unsafe_fixes:
                self.flag(node, f"{_why(snippet(node), self.workers)}; {CONVERTIBLE}")
            elif self.plan.problem is not None and self.ctx.unsafe_fixes and self.workers and not self.plan.quiet:
                self.flag(
                    node,
                    f"{_why(snippet(node), self.workers)}; `--unsafe-fixes` leaves this launch (XLA612): {self.plan.problem}",
                )
            elif self.plan.problem is not None:
                self.flag(node, _why(snippet(node), self.workers))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._launched(node)

    def visit_For(self, node: cst.For) -> None:
        self._launched(node)

    def _launched(self, original: cst.CSTNode) -> None:
        """Under --unsafe-fixes, where XLA612 rewrote the launch: what stays for a person."""
        if self.plan.problem is None and self.ctx.unsafe_fixes and self.plan.launch and original is self.plan.launch[0]:
            self.flag(original, _became(self.plan))


def _plan(ctx, module: cst.Module) -> HogwildPlan:
    """The Hogwild launch XLA612 rewrites (XLA611 words its finding by it): made once a file."""
    if "hogwild" not in ctx.shared:
        plan = HogwildPlan("TorchTPU") if ctx.runtime != "torch-xla" else hogwild_plan(module)
        spawned = {id(s.body[0].value) for s in plan.launch if isinstance(s, cst.SimpleStatementLine)}
        if plan.problem is None and spawned & set(launch_plan(ctx, module).args_dropped):
            plan = HogwildPlan("the world size counted before `mp.spawn` is passed to the workers")
        ctx.shared["hogwild"] = plan
    return ctx.shared["hogwild"]


class HogwildToDataParallel(Rule):
    """Under ``--unsafe-fixes``, a Hogwild launch becomes data parallel under ``torch_xla.launch``.

    The common Hogwild script (PyTorch's mnist_hogwild and its kin) builds the model in its
    ``__main__`` block (or the ``main()`` that block calls), shares it, and starts
    ``mp.Process(target=train, args=(rank, ..., model, ...))`` workers (a ``for rank in
    range(n)`` loop that starts and collects them, or a list comprehension and a start
    loop, then a join loop), or ``mp.spawn(train, args=(..., model, ...))``. XLA611 says why
    that cannot run on XLA; PyTorch/XLA's form of it (the guide's "Distributed Training",
    the DDP guide) is one process per device started by ``torch_xla.launch``, each with its
    own replica, the gradients averaged by ``xm.optimizer_step(optimizer)``. A model built
    in the parent cannot be handed to those processes (XLA tensors do not cross them), so
    the whole ``__main__`` block runs in each one, in ``def _mp_fn(index)`` (as
    ``--target multiprocess``, XLA659, writes it): the arguments, the device, the seed,
    the data and the model are made in every process, the same model in each since the
    parent's seed comes before it; the launch becomes one call of the worker with
    ``xr.global_ordinal()`` for its rank (its per-rank seed now only orders its data), and
    ``share_memory()`` goes. Each ``optimizer.step()`` of the file becomes
    ``xm.optimizer_step(optimizer)`` (optimizers matched by name, as XLA650 does): the
    workers make their optimizers themselves. Code after the join (an evaluation of the
    model) runs in every process, on its trained replica, which is what the parent's model
    held. Measured: ``fixtures/examples/hogwild_mlp.py`` at one process keeps its losses
    (``tests/test_verify_examples.py``).

    Unsafe: asynchronous lock-free updates of one model become synchronous averaged ones, so
    the learning rate and step count may want retuning, and the worker count becomes the
    device count; XLA611's error stays, saying so. Not rewritten (XLA611 says why): a file
    that shares in a helper or more than once, a launch outside the ``__main__`` block, a
    model not built in that block or not passed as a whole argument, workers given more
    than ``target`` and ``args``, a process list used after the join, ``join=False``, a
    world size counted before ``mp.spawn`` and passed on (XLA601 moves it), and TorchTPU,
    whose finding names its own form (DDP over the ``tpu`` group).
    """

    CODE = "XLA612"
    NAME = "hogwild-data-parallel"
    SUMMARY = (
        "a Hogwild launch (shared model, mp.Process or mp.spawn workers) becomes data parallel: "
        "the __main__ block runs in torch_xla.launch(_mp_fn), optimizer.step() -> xm.optimizer_step"
    )
    FIX = UNSAFE
    SEVERITY = "warning"  # what cannot run is XLA611's error
    TRIGGERS = (SHARE_MEMORY_CALL,)
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    WHOLE_MODULE = True  # the launch, the `__main__` block and the workers' optimizer steps
    BEFORE = (
        "import torch.multiprocessing as mp\n\n\ndef train(rank, model):\n    pass\n\n\n"
        'if __name__ == "__main__":\n    model = Net().cuda()\n    model.share_memory()\n'
        "    mp.spawn(train, args=(model,), nprocs=4)\n"
    )
    AFTER = (
        "\n\ndef train(rank, model):\n    pass\n\n\n"
        "def _mp_fn(index):\n    model = Net().cuda()\n    train(xr.global_ordinal(), model)\n\n\n"
        'if __name__ == "__main__":\n    torch_xla.launch(_mp_fn)\n'
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.plan = HogwildPlan("not planned")

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = _plan(self.ctx, node)

    @property
    def converting(self) -> bool:
        return self.plan.problem is None and self.fixing

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if not (
            self.converting
            and isinstance(func, cst.Attribute)
            and func.attr.value == "step"
            and not original.args
            and OPTIMIZER_NAME.search(last_name(func.value))
            and "sched" not in last_name(func.value).lower()
        ):
            return updated
        optimizer = code_of(updated.func.value)
        return self.replace(
            original,
            updated,
            parse_expr(f"xm.optimizer_step({optimizer})"),
            f"`{optimizer}.step()` -> `xm.optimizer_step({optimizer})`: the gradients are averaged across the "
            "replicas before the step (the Hogwild workers became data-parallel processes)",
            imports=[XM],
        )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        return self._launch_statement(original, updated)

    def leave_For(self, original: cst.For, updated: cst.For):
        return self._launch_statement(original, updated)

    def _launch_statement(self, original, updated):
        if self.plan.problem is None and not self.fixing and self.plan.launch and original is self.plan.launch[0]:
            self.replace(
                original,
                updated,
                updated,
                "the Hogwild launch can become data parallel (synchronous averaged updates, a different training "
                f"algorithm): {_rewrite(self.plan)}",
            )
        if not self.converting:
            return updated
        if original is self.plan.share:
            return self.replace(
                _share_call(original),
                updated,
                cst.RemoveFromParent(),
                f"`{self.plan.model}.share_memory()` removed: each process builds its own replica of "
                f"`{self.plan.model}` on its XLA device, and nothing is shared between processes",
            )
        if not self.plan.launch or not any(original is s for s in self.plan.launch):
            return updated
        self.ctx.forget_fixes_inside(original)  # `mp.spawn` -> `torch_xla.launch` (XLA601): the call goes
        drop = self.ctx.import_behind(self.plan.starter)
        if original is not self.plan.launch[0]:
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                "part of the Hogwild launch (starting, joining, the start method): removed",
                drop_if_unused=drop,
            )
        call = cst.SimpleStatementLine([cst.Expr(parse_expr(self.plan.call))], leading_lines=updated.leading_lines)
        if not isinstance(original, cst.SimpleStatementLine):
            # a loop becomes a line: the runner tidies a line as the line it replaced, so it gets a
            # sentinel, and XLA611's TODO (flagged when the loop was entered) is put on it here
            call = cst.FlattenSentinel([self.ctx.attach_todos(original, call)])
        return self.replace(
            original,
            updated,
            call,
            f"the Hogwild launch -> `{self.plan.call}`: each process started by `torch_xla.launch({WORKER})` "
            "trains its own replica",
            imports=[XR],
            drop_if_unused=drop,
        )

    def leave_If(self, original: cst.If, updated: cst.If):
        if not self.converting or original is not self.plan.guard:
            return updated
        body = list(updated.body.body)
        if self.plan.shared:
            body.insert(0, cst.parse_statement(f"global {', '.join(self.plan.shared)}"))
        worker = cst.FunctionDef(
            name=cst.Name(WORKER),
            params=cst.Parameters(params=[cst.Param(cst.Name("index"))]),
            body=updated.body.with_changes(body=body),
            leading_lines=updated.leading_lines,
        )
        guard = updated.with_changes(
            body=updated.body.with_changes(body=[cst.parse_statement(f"torch_xla.launch({WORKER})")]),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )
        return self.replace(
            original,
            updated,
            cst.FlattenSentinel([worker, guard]),
            f"the `__main__` block runs in `def {WORKER}(index)`, one process per XLA device, started by "
            f"`torch_xla.launch({WORKER})`: the model, its device and its data are made in every process",
            imports=[TORCH_XLA],
        )


def _share_call(statement: cst.SimpleStatementLine) -> cst.CSTNode:
    return statement.body[0].value


CONVERTIBLE = (
    "`--unsafe-fixes` rewrites this launch to that form (XLA612: synchronous data parallel, a different "
    "training algorithm from Hogwild's)"
)


def _rewrite(plan: HogwildPlan) -> str:
    return (
        f"the `__main__` block would run in `def {WORKER}(index)` under `torch_xla.launch({WORKER})`, calling "
        f"`{plan.call}` in each process, with `xm.optimizer_step(optimizer)` for each `optimizer.step()`"
    )


def _became(plan: HogwildPlan) -> str:
    return (
        f"Hogwild training became synchronous data parallel (`--unsafe-fixes`): `torch_xla.launch({WORKER})` starts "
        "one process per XLA device (`PJRT_DEVICE`, `TPU_VISIBLE_CHIPS` choose them: the launch's own process count "
        f"no longer applies), each builds its own replica of `{plan.model}` and runs `{plan.call}`, and "
        "`xm.optimizer_step` averages the replicas' gradients at every step, where each Hogwild worker applied "
        "its own to the shared model without locks: a different training algorithm, so check the learning rate "
        "and the number of steps; the replicas start equal only if every process seeds before building "
        f"`{plan.model}` (`{ORDINAL}` is the worker's rank); code after the workers ends runs in every process, "
        f"on its trained replica; see {DDP_GUIDE}"
    )
