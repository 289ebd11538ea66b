"""XLA601: ``mp.spawn(fn, args=..., nprocs=...)`` becomes ``torch_xla.launch(fn, args=...)``
(the migration guide's "Distributed Training"); under TorchTPU the spawn stays, after
``torch.tpu.distributed.set_tpu_launch_env``."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from codemods.shared.definitions import Written
from codemods.shared.device_values import KEPT_CUDA_CHECKS
from codemods.shared.launch_plan import LAUNCH_WORDS, LaunchPlan, launch_plan
from codemods.shared.sharded_models import SPMD_TARGETS, shards_its_model
from migrate_xla.rule.api import (
    SAFE,
    TORCH,
    TORCH_XLA,
    XR,
    FileContext,
    Import,
    Rule,
    call_arg,
    code_nodes,
    code_of,
    drop_items,
    parse_expr,
    string_value,
)


def _without(elements, index: int):
    """Tuple elements without the one at ``index``; one left keeps its comma, so it stays a tuple."""
    kept = drop_items(elements, lambda e: e is elements[index])
    if len(kept) == 1 and not isinstance(kept[0].comma, cst.Comma):
        kept[0] = kept[0].with_changes(comma=cst.Comma())
    return kept


LAUNCH_ENV = "torch.tpu.distributed.set_tpu_launch_env"  # TorchTPU's: before a launcher starts the workers

# A device count the parent cannot do without (the processes per node of the ImageNet example,
# a factor of its world size and the divisor of each worker's batch): what torch_xla.launch
# starts on this host, read as torch_xla 2.9's launch reads it (_internal/pjrt.py
# run_multiprocess: one process per TPU chip, _internal/tpu.py num_local_processes; on the CPU
# one process; each process runs the worker once per device it addresses), without starting the
# runtime. torch_xla has no public function for it: xr.local_device_count() and
# torch_xla.device_count() start the runtime, tpu.num_available_devices() ignores
# TPU_PROCESS_BOUNDS and counts no CPU device.
LAUNCH_COUNT = "xla_launch_device_count"
LAUNCH_COUNT_DEF = f'''
def {LAUNCH_COUNT}():
    """The devices torch_xla.launch runs the worker on, on this host, counted without starting the
    XLA runtime (a device query would, and the launch would then fail): a process per TPU chip
    (fewer where TPU_PROCESS_BOUNDS says so), a worker per device of each; on the CPU one process
    with CPU_NUM_DEVICES devices (1 unless set). Written by xla-migrate (XLA601)."""
    if xr.device_type() == "TPU":
        tpu = torch_xla._internal.tpu
        return tpu.num_local_processes() * tpu.num_logical_cores_per_chip()
    return int(os.environ.get("CPU_NUM_DEVICES", 1))
'''
OS = Import("os")


class MpSpawnToLaunch(Rule):
    """``mp.spawn(fn, args=..., nprocs=...)`` becomes ``torch_xla.launch(fn, args=...)``.

    Guide, "Distributed Training": ``torch_xla.launch`` starts one process per XLA device
    and calls ``fn(index, *args)`` with the global ordinal first, as ``mp.spawn`` passes
    the process index. It takes no process count (``xmp.spawn`` refuses any ``nprocs``
    but 1 or None; set ``PJRT_DEVICE`` / ``TPU_VISIBLE_CHIPS`` to use fewer devices), so
    ``nprocs``, ``join`` and ``daemon`` go; ``start_method`` stays. A spawn that does not
    join (``join=False``) is flagged: ``torch_xla.launch`` always waits.

    A world size counted before the spawn (``world_size = torch.cuda.device_count()``)
    cannot be counted on XLA before the launch: any device query starts the runtime in
    the parent, and the launch then fails. So the count goes, and when it was passed to
    the worker, the worker takes it from the runtime instead: its parameter becomes the
    first line ``world_size = xr.world_size()``. Where the count is used for more than
    the spawn, or the worker is not a function of this file called only here (the ImageNet
    example's ``ngpus_per_node``: the spawn's ``nprocs``, a factor of the world size, passed
    to the worker that divides the batch by it, and to a direct call of the worker), it
    stays, counted as the launch will start processes: ``xla_launch_device_count()``, a
    function written into the file, reads what torch_xla 2.9's launch reads (one process per
    TPU chip, ``TPU_PROCESS_BOUNDS``, a worker per device of each process; on the CPU one
    process with ``CPU_NUM_DEVICES`` devices) and starts no runtime. Left as a CUDA count it
    would be 0 on XLA (the migrated ImageNet example died dividing by it); measured on CPU
    PJRT: 1 without ``CPU_NUM_DEVICES`` and 3 with ``CPU_NUM_DEVICES=3``, the workers the
    launch then ran, and the launch after it works. For the same reason the parent's other
    device queries that the migration writes start no runtime either: an availability test
    in the parent's own code (the module's statements, the function that launches) becomes
    ``bool(xla_launch_device_count())``, not ``bool(torch_xla.device_count())``, and a device
    another rule made ``torch_xla.device()`` there is ``torch.device("xla")`` (measured:
    ``torch_xla.device()``, ``torch_xla.device_count()`` and ``xr.world_size()`` each start
    the runtime, ``torch.device("xla")`` does not; the ImageNet example picks its device so
    before it counts). An availability test that XLA105 keeps for CUDA stays as it is.

    In a script that shards its model (FSDP, FSDP2, a device mesh: the sharding rules make it one
    SPMD program), the worker is not started once per device but called once, as process 0 of 1:
    ``mp.spawn(fsdp_main, args=(world_size, args), nprocs=world_size)`` becomes ``fsdp_main(0, 1,
    args)``, PyTorch's FSDP tutorial's launch. One SPMD process drives every device (the SPMD
    user guide), and in it ``xr.global_ordinal()`` is 0 and ``xr.world_size()`` 1, so the world
    size counted before the spawn is passed as 1 and its count goes; the worker keeps its
    parameters, and its process group becomes the SPMD set-up (XLA620). A spawn the worker cannot
    stand in for (not joined, a worker that is not a function of the file, a count the parent
    keeps) leaves the file's sharding flagged, and the spawn becomes ``torch_xla.launch`` as above.

    Both runtimes. TorchTPU keeps ``mp.spawn`` (and its ``nprocs``, the world size counted
    before it: ``torch.tpu.device_count()`` reads the chips without claiming them), but every
    worker must see the same TPU launch environment (the chips' addresses and topology, which
    nothing in torch sets), decided once in the parent before the spawn: TorchTPU's
    ``torch.tpu.distributed.set_tpu_launch_env(nproc_per_node=...)`` sets it, and never
    overwrites what is set already. So the spawn's statement gets that call before it, with the
    spawn's ``nprocs``; a spawn that is not a statement of its own is flagged, and a file that
    calls ``set_tpu_launch_env`` already is left as it is.
    """

    CODE = "XLA601"
    NAME = "mp-spawn"
    SUMMARY = (
        "mp.spawn(fn, args, nprocs) becomes torch_xla.launch(fn, args); the world size comes from the runtime, "
        "or from a count that starts no runtime"
    )
    FIX = SAFE
    TRIGGERS = (LAUNCH_WORDS,)
    BEFORE = (
        "import torch.multiprocessing as mp\n\n\ndef train(rank, world_size, args):\n    pass\n\n\n"
        "world_size = torch.cuda.device_count()\nmp.spawn(train, args=(world_size, args), nprocs=world_size)\n"
    )
    AFTER = (
        "\n\ndef train(rank, args):\n    world_size = xr.world_size()\n    pass\n\n\n"
        "torch_xla.launch(train, args=(args,))\n"
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.plan = LaunchPlan()
        self.written = Written(ctx, {LAUNCH_COUNT: LAUNCH_COUNT_DEF})
        self.spmd = False  # the script shards its model: the worker is called once
        self.parent_seeds = False  # the parent's code seeds torch before the spawn
        self.functions: dict[str, cst.FunctionDef] = {}  # the module's own, by name

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = launch_plan(self.ctx, node)
        self.spmd = (
            self.ctx.runtime == "torch-xla"
            and self.ctx.settings.target in SPMD_TARGETS
            and self.plan.once
            and shards_its_model(self, node)
        )
        self.functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if id(original) not in self.plan.dropped_counts or self.ctx.runtime != "torch-xla":
            return updated
        self.ctx.forget_fixes_inside(original)
        why = (
            "the one SPMD process drives every device, and the worker it calls is given a world size of 1"
            if self.spmd
            else "torch_xla.launch starts one process per device itself, and counting devices before it would "
            "start the XLA runtime in the parent"
        )
        return self.replace(original, updated, cst.RemoveFromParent(), f"`{code_of(original).strip()}`: {why}: removed")

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.ctx.runtime != "torch-xla":
            if id(original) in self.plan.spawns and not self._own_statement(original) and not self._launch_env_set():
                self.flag(
                    original,
                    f"`{code_of(original.func)}` stays under {self.ctx.api.title}: call `{LAUNCH_ENV}(nproc_per_node=...)` "
                    "in the parent before it, so that every worker sees the same TPU launch environment",
                )
            return updated
        if id(original) in self.plan.parent_calls:
            if self.spmd:  # no launch to start the runtime before: only whether the parent seeds matters
                self.parent_seeds = self.parent_seeds or self._seeds(original)
            else:
                parent = self._in_parent(original, updated)
                if parent is not None:
                    return parent
        if id(original) in self.plan.kept_counts:
            self.ctx.forget_fixes_inside(original)
            counted = self.replace(
                original,
                original,
                parse_expr(f"{LAUNCH_COUNT}()"),
                f"`{code_of(original)}` -> `{LAUNCH_COUNT}()`, written into this file: the devices "
                "`torch_xla.launch` runs the worker on, on this host, counted without starting the XLA runtime "
                "(a device query would start it in the parent, and the launch would fail)",
                imports=[TORCH_XLA, XR, OS],
                drop_if_unused=self.ctx.import_behind(original.func),
            )
            if counted is not original:
                self.written.use(LAUNCH_COUNT)
            return counted
        if id(original) not in self.plan.spawns:
            return updated
        if self.spmd:
            return self._called_once(original, updated)
        join = call_arg(original, 3, "join")
        if join is not None and code_of(join.value) != "True":
            self.flag(original, f"`torch_xla.launch` always waits for its processes; see {DDP_GUIDE}")
            return updated
        positional = [i for i, a in enumerate(original.args) if a.keyword is None]
        if len(positional) > 5 or any(a.star for a in original.args):
            self.flag(
                original, f"`mp.spawn` with these arguments: call `torch_xla.launch(fn, args=...)`; see {DDP_GUIDE}"
            )
            return updated
        dropped = set(positional[2:]) | {
            i
            for i, a in enumerate(original.args)
            if a.keyword is not None and a.keyword.value in ("nprocs", "join", "daemon")
        }
        args = list(updated.args)
        given = call_arg(original, 1, "args")
        for i in dropped:
            self.ctx.forget_fixes_inside(original.args[i])  # nprocs=torch.cuda.device_count() goes
        if id(original) in self.plan.args_dropped and given is not None:
            at = original.args.index(given)
            elements = _without(args[at].value.elements, self.plan.args_dropped[id(original)])
            args[at] = args[at].with_changes(value=args[at].value.with_changes(elements=elements))
        gone = {id(args[i]) for i in dropped}
        return self.replace(
            original,
            updated,
            updated.with_changes(func=parse_expr("torch_xla.launch"), args=drop_items(args, lambda a: id(a) in gone)),
            "`mp.spawn` -> `torch_xla.launch`: one process per XLA device, the global ordinal passed first",
            imports=[TORCH_XLA],
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _called_once(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``mp.spawn(fn, args=(...), ...)`` -> ``fn(0, ...)``, the world size it passes (its process count,
        or a count made for it) given as 1."""
        fn, given, nprocs = call_arg(original, 0, "fn"), call_arg(original, 1, "args"), call_arg(original, 2, "nprocs")
        elements = given.value.elements if given is not None else ()
        now = updated.args[original.args.index(given)].value.elements if given is not None else ()
        counted = self.plan.args_dropped.get(id(original))
        # the world size it passes: the spawn's process count, or a count made for it
        sizes = [
            at == counted or (nprocs is not None and e.value.deep_equals(nprocs.value)) for at, e in enumerate(elements)
        ]
        values = ["1" if size else code_of(e.value) for size, e in zip(sizes, now)]
        gone = [arg for arg in original.args if arg is not fn and arg is not given]  # nprocs, join, daemon
        for node in [*gone, *(e for size, e in zip(sizes, elements) if size)]:
            self.ctx.forget_fixes_inside(node)
        fn = updated.args[original.args.index(fn)].value
        call = f"{code_of(fn)}({', '.join(['0', *values])})"
        worker = self.functions.get(code_of(fn))
        if self.parent_seeds and worker is not None and not any(map(self._seeds, code_nodes(worker))):
            self.note(
                original,
                f"`{call}` runs the worker in this process, from the random state `torch.manual_seed` left here; "
                "each spawned worker started from a new process' own: its initial weights and dropout differ from "
                "the GPU run's unless the worker seeds itself (`torch.manual_seed(...)` as its first line)",
            )
        return self.replace(
            original,
            updated,
            parse_expr(call),
            f"`mp.spawn` -> `{call}`: the script shards its model, and one SPMD process drives every device: the "
            "worker runs once, as process 0 of 1 (its process group becomes the SPMD set-up)",
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _seeds(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.qualname(node.func) == "torch.manual_seed"

    def _in_parent(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """A call of the parent's code that another rule made a device query: an availability test
        (``bool(torch_xla.device_count())``) becomes ``bool(xla_launch_device_count())``, the device
        (``torch_xla.device()``) ``torch.device("xla")``; both start no runtime. None: left as it is."""
        if id(original) in self.plan.parent_checks:
            if id(original) in self.ctx.shared.get(KEPT_CUDA_CHECKS, ()):
                return None  # XLA105 keeps it for CUDA (it guards CUDA-only code): no device query
            new, what = f"bool({LAUNCH_COUNT}())", "an XLA device test"
        elif code_of(updated) == self.ctx.api.device and code_of(original) != self.ctx.api.device:
            new, what = 'torch.device("xla")', "`torch_xla.device()`"
        else:
            return None
        self.ctx.forget_fixes_inside(original)
        replaced = self.replace(
            original,
            original,
            parse_expr(new),
            f"`{code_of(original)}` -> `{new}`: in the parent of `torch_xla.launch`, {what} would start the XLA "
            "runtime before the launch, and the launch would fail",
            imports=[TORCH_XLA, XR, OS, TORCH] if LAUNCH_COUNT in new else [TORCH],
            drop_if_unused=self.ctx.import_behind(original.func),
        )
        if LAUNCH_COUNT in new and replaced is not original:
            self.written.use(LAUNCH_COUNT)
        return replaced

    # -- TorchTPU: the spawn stays, after the TPU launch environment ------------------------------
    def _own_statement(self, call: cst.Call) -> bool:
        """Whether ``call`` is the one statement of its line (``mp.spawn(...)``)."""
        line = self.ctx.statements[-1] if self.ctx.statements else None
        return (
            isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(line.body[0], cst.Expr)
            and line.body[0].value is call
        )

    def _launch_env_set(self) -> bool:
        return "set_tpu_launch_env" in self.ctx.source

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if self.ctx.runtime == "torch-xla" or len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        call = original.body[0].value
        if id(call) not in self.plan.spawns or self._launch_env_set() or not isinstance(updated.body[0], cst.Expr):
            return updated
        nprocs = call_arg(call, 2, "nprocs")
        now = updated.body[0].value
        count = code_of(now.args[call.args.index(nprocs)].value) if nprocs is not None else "1"
        setup = cst.SimpleStatementLine(
            [cst.Expr(parse_expr(f"{LAUNCH_ENV}(nproc_per_node={' '.join(count.split())})"))],
            leading_lines=updated.leading_lines,
        )
        lines = cst.FlattenSentinel([setup, updated.with_changes(leading_lines=[])])
        if (
            self.replace(
                original,
                updated,
                lines,
                f"`{code_of(call.func)}` stays under {self.ctx.api.title}; `{LAUNCH_ENV}(...)` added before it: every "
                "worker must see the same TPU launch environment (the chips' addresses and topology), set once in "
                "the parent before the spawn",
                imports=[TORCH],
            )
            is not lines
        ):
            return updated
        setup = self.ctx.attach_todos(original, setup)  # the runner does it for one statement only
        return cst.FlattenSentinel([setup, updated.with_changes(leading_lines=[])])

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        index = self.plan.workers.get(id(original))
        if index is None or self.ctx.runtime != "torch-xla" or self.spmd:
            return updated
        param = original.params.params[index]
        params = drop_items(updated.params.params, lambda p: p is updated.params.params[index])
        line = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(param.name.value))], parse_expr("xr.world_size()"))]
        )
        body = list(updated.body.body)
        first = body[0] if body else None
        docstring = (
            isinstance(first, cst.SimpleStatementLine)
            and isinstance(first.body[0], cst.Expr)
            and string_value(first.body[0].value) is not None
        )
        at = 1 if docstring else 0
        body.insert(at, line)
        return self.replace(
            original,
            updated,
            updated.with_changes(
                params=updated.params.with_changes(params=params),
                body=updated.body.with_changes(body=body),
            ),
            f"`{param.name.value}` is no longer passed by the launch: the worker reads `xr.world_size()`",
            imports=[XR],
        )
