"""XLA6xx: distributed GPU scripts (mp.spawn, NCCL, DDP, torchrun) in PyTorch/XLA's form.

Follows the migration guide's "Distributed Training" section and PyTorch/XLA's DDP guide
(DDP_GUIDE below): one process per XLA device, started by ``torch_xla.launch``; DDP over
the ``xla`` process group (``init_method="xla://"``), which takes its rank and world size
from the XLA runtime; ranks and sizes read from ``torch_xla.runtime``
(``xr.global_ordinal()``, ``xr.local_ordinal()``, ``xr.world_size()``).

``torch.cuda.set_device(rank)`` is XLA105's (devices): it means nothing on XLA and is
removed. ``torch.cuda.device_count()`` is XLA105's too (``torch_xla.device_count()``),
except where it is the world size: then it is this family's (XLA601 before a launch,
XLA604 elsewhere), because the two differ and because querying devices before
``torch_xla.launch`` starts the runtime in the parent and makes the launch fail
("Runtime is already initialized"). Checked on CPU PJRT at world size 1: the xla group,
DDP, ``dist.all_reduce``, ``xm.rendezvous`` and ``destroy_process_group`` work both under
``torch_xla.launch`` and in one process started with torchrun's variables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from migrate_xla.rule import (
    EQUAL,
    GAP,
    SAFE,
    TORCH_XLA,
    XM,
    XR,
    FileContext,
    Import,
    Rule,
    append_keyword,
    call_arg,
    children,
    code_of,
    drop_items,
    last_name,
    parse_expr,
    string_value,
    subtree,
    words,
)

DDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/ddp.html"
FSDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdp.html"
SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"
XLA_BACKEND = Import("torch_xla.distributed.xla_backend")  # registers the "xla" backend and "xla://"

SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"})
# launches already in XLA's form: a count before them breaks them just the same
LAUNCHES = SPAWN | {"torch_xla.launch", "torch_xla.torch_xla.launch", "torch_xla.distributed.xla_multiprocessing.spawn"}
LAUNCH_WORDS = words("spawn", "launch")  # the last part of every name in LAUNCHES
LAUNCH_WORD = re.compile(LAUNCH_WORDS)
DEVICE_COUNT = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})
WORLD_NAME = re.compile(r"world_?size|num_replicas|nprocs", re.IGNORECASE)


def _is_device_count(ctx: FileContext, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and ctx.qualname(node.func) in DEVICE_COUNT


def _names(node: cst.CSTNode, name: str, scoped: bool = True, top: bool = True) -> int:
    """How often the variable ``name`` occurs in ``node`` (not as an attribute or a keyword);
    ``scoped``: not counting the functions and classes defined inside it."""
    if scoped and not top and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return 0
    if isinstance(node, cst.Name):
        return int(node.value == name)
    below = [node.value] if isinstance(node, (cst.Attribute, cst.Arg)) else children(node)
    return sum(_names(child, name, scoped, top=False) for child in below)


# -- what a file's mp.spawn calls need (XLA601) ----------------------------------------------


@dataclass
class LaunchPlan:
    """The edits around each ``mp.spawn`` call, found before the traversal reaches them."""

    spawns: set[int] = field(default_factory=set)  # ids of the spawn calls
    dropped_counts: set[int] = field(default_factory=set)  # `n = torch.cuda.device_count()` assignments that go
    kept_counts: set[int] = field(default_factory=set)  # device_count calls a launch cannot do without
    counts: set[int] = field(default_factory=set)  # device_count calls of the lines that go
    args_dropped: dict[int, int] = field(default_factory=dict)  # spawn call -> index in its args tuple
    workers: dict[int, int] = field(default_factory=dict)  # worker def -> index of its world-size parameter
    launches: int = 0  # launch calls of any kind (spawn, torch_xla.launch)


def launch_plan(ctx: FileContext, module: cst.Module) -> LaunchPlan:
    """Where world sizes counted before a spawn go: into the worker, as ``xr.world_size()``.

    Shared by XLA601 and XLA604 (the count before a launch is XLA601's); made once a file.
    Code without a launch word has no launch, and no plan: the whole tree is not walked.
    A launch in a slice needs the whole file: the plan follows the spawned worker and the
    counts in the parent's code.
    """
    if "launch_plan" not in ctx.shared:
        if not LAUNCH_WORD.search(ctx.source):
            ctx.shared["launch_plan"] = LaunchPlan()
        else:
            ctx.shared["launch_plan"] = _launch_plan(module)
    plan = ctx.shared["launch_plan"]
    if plan.launches:
        ctx.need_whole_module()  # both rules keep the launch words' units in a slice (TRIGGERS, CONTEXT)
    return plan


def _launch_plan(module: cst.Module) -> LaunchPlan:
    names = FileContext()
    found: list[tuple[cst.Call, cst.CSTNode]] = []
    counted: list[tuple[cst.Call, cst.CSTNode]] = []

    def walk(node: cst.CSTNode, scope: cst.CSTNode) -> None:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            names.learn_import(node)
        scope = node if isinstance(node, cst.FunctionDef) else scope
        if isinstance(node, cst.Call) and names.qualname(node.func) in LAUNCHES:
            found.append((node, scope))
        elif _is_device_count(names, node):
            counted.append((node, scope))
        for child in children(node):
            walk(child, scope)

    walk(module, module)
    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    plan = LaunchPlan(spawns={id(call) for call, _ in found if names.qualname(call.func) in SPAWN}, launches=len(found))
    for call, scope in found:
        fn, given = call_arg(call, 0, "fn"), call_arg(call, 1, "args")
        elements = given.value.elements if given is not None and isinstance(given.value, cst.Tuple) else ()
        worker = defs.get(fn.value.value) if fn is not None and isinstance(fn.value, cst.Name) else None
        for line in subtree(scope):
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
                continue
            assign = line.body[0]
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name) and _is_device_count(names, assign.value)):
                continue
            count = assign.targets[0].target.value
            if _names(call, count) == 0:
                continue
            place = next((i for i, e in enumerate(elements) if isinstance(e.value, cst.Name) and e.value.value == count), None)
            movable = place is None or (
                worker is not None
                and _names(module, worker.name.value, scoped=False) == 2  # its def and this spawn: no other caller
                and place + 1 < len(worker.params.params)
            )
            if movable and _names(scope, count) == 1 + _names(call, count):
                plan.dropped_counts.add(id(assign))
                plan.counts.add(id(assign.value))
                if place is not None:
                    plan.args_dropped[id(call)] = place
                    plan.workers[id(worker)] = place + 1
            else:
                plan.kept_counts.add(id(assign.value))
    # the parent's code: the module's own statements and the functions that spawn
    parents = {id(module)} | {id(scope) for _, scope in found} if found else set()
    nprocs = {id(n) for call, _ in found if call_arg(call, 2, "nprocs") for n in subtree(call_arg(call, 2, "nprocs"))}
    plan.kept_counts |= {
        id(call) for call, scope in counted if id(scope) in parents and id(call) not in plan.counts | nprocs
    }
    return plan


def _without(elements, index: int):
    """Tuple elements without the one at ``index``; one left keeps its comma, so it stays a tuple."""
    kept = drop_items(elements, lambda e: e is elements[index])
    if len(kept) == 1 and not isinstance(kept[0].comma, cst.Comma):
        kept[0] = kept[0].with_changes(comma=cst.Comma())
    return kept


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
    the spawn, or the worker is not a function of this file called only here, it is
    flagged.
    """

    CODE = "XLA601"
    NAME = "mp-spawn"
    SUMMARY = "mp.spawn(fn, args, nprocs) becomes torch_xla.launch(fn, args); the world size comes from the runtime"
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

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = launch_plan(self.ctx, node)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if id(original) not in self.plan.dropped_counts:
            return updated
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original, updated, cst.RemoveFromParent(),
            f"`{code_of(original).strip()}`: torch_xla.launch starts one process per device itself, "
            "and counting devices before it would start the XLA runtime in the parent: removed",
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self.plan.kept_counts:
            self.ctx.forget_fixes_inside(original)
            self.flag(
                original,
                "devices cannot be counted before `torch_xla.launch` (the query starts the XLA runtime in the "
                "parent and the launch fails): read `xr.world_size()` inside the worker instead",
            )
            return original
        if id(original) not in self.plan.spawns:
            return updated
        join = call_arg(original, 3, "join")
        if join is not None and code_of(join.value) != "True":
            self.flag(original, f"`torch_xla.launch` always waits for its processes; see {DDP_GUIDE}")
            return updated
        positional = [i for i, a in enumerate(original.args) if a.keyword is None]
        if len(positional) > 5 or any(a.star for a in original.args):
            self.flag(original, f"`mp.spawn` with these arguments: call `torch_xla.launch(fn, args=...)`; see {DDP_GUIDE}")
            return updated
        dropped = set(positional[2:]) | {
            i for i, a in enumerate(original.args) if a.keyword is not None and a.keyword.value in ("nprocs", "join", "daemon")
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

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        index = self.plan.workers.get(id(original))
        if index is None:
            return updated
        param = original.params.params[index]
        params = drop_items(updated.params.params, lambda p: p is updated.params.params[index])
        line = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(param.name.value))], parse_expr("xr.world_size()"))]
        )
        body = list(updated.body.body)
        first = body[0] if body else None
        docstring = (
            isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr)
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


# -- the process group (XLA602) ---------------------------------------------------------------

INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
CPU_BACKENDS = frozenset({"gloo", "mpi"})
DERIVED = frozenset({"rank", "world_size", "init_method", "device_id"})  # what the xla:// rendezvous supplies


def _is_nccl(node: cst.CSTNode) -> bool:
    """``"nccl"``, ``"cuda:nccl,cpu:gloo"`` or ``"nccl" if ... else "gloo"``."""
    if isinstance(node, cst.IfExp):
        return _is_nccl(node.body) or _is_nccl(node.orelse)
    value = string_value(node)
    return value is not None and "nccl" in value


def _names_backend(name: str) -> bool:
    return "backend" in name.lower()


class XlaProcessGroup(Rule):
    """``dist.init_process_group("nccl", ...)`` becomes the XLA backend's group.

    PyTorch/XLA's DDP guide: ``dist.init_process_group("xla", init_method="xla://")``
    after ``import torch_xla.distributed.xla_backend`` (which registers both). The
    ``xla://`` rendezvous takes the rank and world size from the XLA runtime (and
    torchrun's variables when torchrun started the process), so ``rank=``,
    ``world_size=``, ``init_method=`` and ``device_id=`` go. A backend given as a
    variable or flag becomes ``"xla"`` too: a TPU has no other device backend. ``gloo``
    or ``mpi`` groups are CPU groups and stay. NCCL names stored for later
    (``backend = "nccl"``, an argparse ``--dist-backend`` default, a parameter default)
    become ``"xla"`` so the script reports what it runs.
    """

    CODE = "XLA602"
    NAME = "xla-process-group"
    SUMMARY = "init_process_group('nccl', rank, world_size) becomes init_process_group('xla', init_method='xla://')"
    FIX = SAFE
    TRIGGERS = (r"init_process_group", r"""['"][^'"\n]*nccl""")
    BEFORE = 'import torch.distributed as dist\n\ndist.init_process_group("nccl", rank=rank, world_size=world_size)\n'
    AFTER = 'import torch.distributed as dist\n\ndist.init_process_group("xla", init_method="xla://")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != INIT_PROCESS_GROUP:
            return self._backend_default(original, updated)
        backend = call_arg(original, 0, "backend")
        if backend is not None and string_value(backend.value) in CPU_BACKENDS | {"xla"}:
            return updated
        if len([a for a in original.args if a.keyword is None]) > 1 or any(a.star for a in original.args):
            self.flag(original, f'pass the backend only: `init_process_group("xla", init_method="xla://")`, see {DDP_GUIDE}')
            return updated
        if call_arg(original, None, "store") is not None:
            self.flag(original, f'a store-based group: the xla backend rendezvous through `init_method="xla://"`, see {DDP_GUIDE}')
            return updated
        for arg in original.args:
            if arg.keyword is not None and arg.keyword.value in DERIVED:
                self.ctx.forget_fixes_inside(arg)
        xla = cst.SimpleString('"xla"')
        derived = {id(a) for o, a in zip(original.args, updated.args) if o.keyword is not None and o.keyword.value in DERIVED}
        args = [
            a.with_changes(value=xla) if backend is not None and o is backend else a
            for o, a in zip(original.args, updated.args)
        ]
        args = drop_items(args, lambda a: id(a) in derived)
        if backend is None:
            args.insert(0, cst.Arg(xla, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) if args else cst.Arg(xla))
        call = append_keyword(updated.with_changes(args=args), "init_method", cst.SimpleString('"xla://"'))
        was = f"`{code_of(backend.value)}`" if backend is not None else "the default backend"
        return self.replace(
            original, updated, call,
            f'{was} -> the XLA backend (`"xla"`, `init_method="xla://"`): it takes the rank and world size from the runtime',
            imports=[XLA_BACKEND],
        )

    def _backend_default(self, original: cst.Call, updated: cst.Call):
        """``parser.add_argument("--dist-backend", default="nccl")``."""
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return updated
        flags = [string_value(a.value) or "" for a in original.args if a.keyword is None]
        default = call_arg(original, None, "default")
        if default is None or not _is_nccl(default.value) or not any(_names_backend(f) for f in flags):
            return updated
        return self._to_xla(original, updated, default.value, "argparse default")

    def _to_xla(self, original, updated, value: cst.BaseExpression, where: str):
        """``updated`` with its NCCL ``value`` (an argument's, or an assignment's) made ``"xla"``."""
        xla = cst.SimpleString('"xla"')
        if isinstance(updated, cst.Call):
            replacement = updated.with_changes(args=[
                a.with_changes(value=xla) if o.value is value else a for o, a in zip(original.args, updated.args)
            ])
        elif isinstance(updated, cst.Param):
            replacement = updated.with_changes(default=xla)
        else:
            replacement = updated.with_changes(value=xla)
        return self.replace(original, updated, replacement, f'`{code_of(value)}` ({where}) -> `"xla"`', imports=[XLA_BACKEND])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        targets = [last_name(t.target) for t in original.targets]
        if _is_nccl(original.value) and all(_names_backend(t) for t in targets):
            return self._to_xla(original, updated, original.value, "assigned")
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        if original.default is not None and _is_nccl(original.default) and _names_backend(original.name.value):
            return self._to_xla(original, updated, original.default, "a default")
        return updated


# -- DistributedDataParallel (XLA603) -----------------------------------------------------------

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})


class DdpXlaForm(Rule):
    """``DDP(model, device_ids=[rank], output_device=rank)`` becomes the DDP guide's form.

    PyTorch/XLA's DDP guide wraps the model already on the XLA device as
    ``DDP(model, gradient_as_bucket_view=True)``: there are no device ids on XLA (each
    process owns one device), and gradients kept as views of DDP's buckets save a copy
    of every gradient, which the guide recommends for memory and speed. Other options
    (``find_unused_parameters``, ``broadcast_buffers``, ...) stay.
    """

    CODE = "XLA603"
    NAME = "ddp-xla-form"
    SUMMARY = "DDP(model, device_ids=[rank]) becomes DDP(model, gradient_as_bucket_view=True)"
    FIX = SAFE
    TRIGGERS = (r"DistributedDataParallel",)
    BEFORE = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "model = DDP(model, device_ids=[rank], output_device=rank)\n"
    )
    AFTER = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "model = DDP(model, gradient_as_bucket_view=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in DDP or any(a.star for a in original.args):
            return updated
        device_args = [call_arg(original, 1, "device_ids"), call_arg(original, 2, "output_device")]
        dropped = {i for i, a in enumerate(original.args) if a in device_args and a is not None}
        has_views = call_arg(original, None, "gradient_as_bucket_view") is not None
        if not dropped and has_views:
            return updated
        gone = {id(updated.args[i]) for i in dropped}
        call = updated.with_changes(args=drop_items(updated.args, lambda a: id(a) in gone))
        if not has_views:
            call = append_keyword(call, "gradient_as_bucket_view", cst.Name("True"))
        for i in dropped:
            self.ctx.forget_fixes_inside(original.args[i])
        return self.replace(
            original, updated, call,
            "DDP on XLA (DDP guide): no device ids, each process owns its device; `gradient_as_bucket_view=True` "
            "saves a copy of the gradients",
        )


# -- ranks and world sizes (XLA604, XLA605) ---------------------------------------------------------

ENV_ORDINALS = {"RANK": "xr.global_ordinal()", "LOCAL_RANK": "xr.local_ordinal()", "WORLD_SIZE": "xr.world_size()"}
DIST_ORDINALS = {
    "torch.distributed.get_rank": "xr.global_ordinal()",
    "torch.distributed.get_world_size": "xr.world_size()",
    "torch.distributed.get_node_local_rank": "xr.local_ordinal()",
}


class XlaOrdinals(Rule):
    """Ranks and world sizes are read from ``torch_xla.runtime``.

    The guide's multi-process example reads ``xr.global_ordinal()`` and
    ``xr.world_size()``. ``int(os.environ["RANK"])`` / ``LOCAL_RANK`` / ``WORLD_SIZE``
    become ``xr.global_ordinal()`` / ``xr.local_ordinal()`` / ``xr.world_size()``: under
    ``torch_xla.launch`` torchrun's variables are not set, while the runtime always
    knows. A variable compared with a default (``int(os.environ.get("RANK", -1)) != -1``)
    asks whether torchrun started the script, and stays. ``dist.get_rank()`` and
    ``dist.get_world_size()`` of the default group become the same calls (they agree
    under the xla group and also work before it exists). ``torch.cuda.device_count()``
    stored as the world size becomes ``xr.world_size()``: ``torch_xla.device_count()``
    (XLA105) counts the devices this process addresses, one under ``torch_xla.launch``.
    Rank-0 checks keep their meaning: the global ordinal 0 is the master.
    """

    CODE = "XLA604"
    NAME = "xla-ordinals"
    SUMMARY = "RANK / LOCAL_RANK / WORLD_SIZE, dist.get_rank() and world-size counts become xr calls"
    FIX = SAFE
    TRIGGERS = (r"RANK|WORLD_SIZE", r"get_rank|get_world_size|get_node_local_rank", r"device_count")
    CONTEXT = MpSpawnToLaunch.TRIGGERS  # the launch plan's spawn calls
    BEFORE = (
        'import os\n\nimport torch.distributed as dist\n\n'
        'local_rank = int(os.environ["LOCAL_RANK"])\nworld_size = dist.get_world_size()\n'
    )
    AFTER = "import os\n\nlocal_rank = xr.local_ordinal()\nworld_size = xr.world_size()\n"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.compared: set[int] = set()  # operands of comparisons: torchrun-or-not switches
        self.plan = LaunchPlan()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.compared |= {id(node.left), *(id(c.comparator) for c in node.comparisons)}

    def _env_variable(self, node: cst.CSTNode) -> str | None:
        """``RANK`` for ``os.environ["RANK"]``, ``os.environ.get("RANK", 0)``, ``os.getenv("RANK")``."""
        if isinstance(node, cst.Subscript) and self.qualname(node.value) == "os.environ" and len(node.slice) == 1:
            index = node.slice[0].slice
            return string_value(index.value) if isinstance(index, cst.Index) else None
        if isinstance(node, cst.Call) and self.qualname(node.func) in ("os.environ.get", "os.getenv") and node.args:
            return string_value(node.args[0].value)
        return None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in DIST_ORDINALS and not original.args:
            return self._ordinal(original, updated, DIST_ORDINALS[name], f"`{code_of(original)}`")
        if (isinstance(original.func, cst.Name) and original.func.value == "int" and name is None
                and len(original.args) == 1 and id(original) not in self.compared):
            variable = self._env_variable(original.args[0].value)
            if variable in ENV_ORDINALS:
                return self._ordinal(original, updated, ENV_ORDINALS[variable], f"torchrun's `{variable}`")
        return updated

    def _ordinal(self, original, updated, call: str, what: str):
        return self.replace(
            original, updated, parse_expr(call), f"{what} -> `{call}`: the XLA runtime knows it in every launch",
            imports=[XR], drop_if_unused=self.ctx.import_behind(original.func),
        )

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = launch_plan(self.ctx, node)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not (_is_device_count(self.ctx, original.value) and all(WORLD_NAME.search(last_name(t.target)) for t in original.targets)):
            return updated
        if id(original.value) in self.plan.kept_counts or id(original.value) in self.plan.counts:
            return updated  # counted before a launch: XLA601's
        self.ctx.forget_fixes_inside(original.value)
        return self.replace(
            original, updated, updated.with_changes(value=parse_expr("xr.world_size()")),
            f"`{code_of(original.value)}` as the world size -> `xr.world_size()` (all processes' devices, not this one's)",
            imports=[XR],
        )


RANK_NAME = re.compile(r"(^|_)rank$|^(gpu|gpu_id|device_id)$", re.IGNORECASE)


def _is_rank(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and bool(RANK_NAME.search(last_name(node)))


class RankAsDevice(Rule):
    """A rank used as a CUDA device index (``model.to(rank)``) becomes the XLA device.

    DDP tutorials move the model and batches to ``rank`` / ``local_rank`` / ``args.gpu``,
    an integer that means ``cuda:<rank>``. On XLA each process owns one device, which
    ``torch_xla.device()`` returns. Matched by shape: a ``.to(...)`` whose only
    positional argument, or a ``device=`` argument, is a name ending in ``rank`` (or
    ``gpu``, ``device_id``); the diagnostic says it guessed.
    """

    CODE = "XLA605"
    NAME = "rank-as-device"
    SUMMARY = ".to(rank) and device=local_rank become the XLA device"
    FIX = SAFE
    # A RANK_NAME (any case) as an argument, so followed by , or ); of .to( or device=
    TRIGGERS = (rf"(?:[rR][aA][nN][kK]|[gG][pP][uU](?:_[iI][dD])?|[dD][eE][vV][iI][cC][eE]_[iI][dD]){GAP}[,)]",)
    REQUIRES = (rf"\.{GAP}to{GAP}\(|device{GAP}=",)
    BEFORE = "model = Net().to(rank)\nbuffer = torch.zeros(2, device=local_rank)\n"
    AFTER = "model = Net().to(torch_xla.device())\nbuffer = torch.zeros(2, device=torch_xla.device())\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        method = original.func.attr.value if isinstance(original.func, cst.Attribute) else ""
        positional = [a for a in original.args if a.keyword is None]
        moved = [
            i for i, a in enumerate(original.args)
            if _is_rank(a.value) and (
                (a.keyword is not None and a.keyword.value == "device")
                or (method == "to" and a.keyword is None and a is positional[0])
            )
        ]
        if not moved:
            return updated
        args = list(updated.args)
        for i in moved:
            args[i] = args[i].with_changes(value=parse_expr("torch_xla.device()"))
        names = ", ".join(f"`{code_of(original.args[i].value)}`" for i in moved)
        return self.replace(
            original, updated, updated.with_changes(args=args),
            f"{names} as a CUDA device index -> `torch_xla.device()` (matched by name: taken for a rank)",
            imports=[TORCH_XLA],
        )


# -- data sharding and collectives (XLA606, XLA607) ------------------------------------------

SAMPLER = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
SAMPLER_SHARDS = ((1, "num_replicas", "xr.world_size()"), (2, "rank", "xr.global_ordinal()"))


class DistributedSamplerShards(Rule):
    """``DistributedSampler(ds, num_replicas=world_size, rank=rank)`` takes its shard from the runtime.

    Guide, "Distributed Training": ``DistributedSampler(dataset,
    num_replicas=xr.world_size(), rank=xr.global_ordinal())``. A world size or rank the
    script computed (a parameter, torchrun's variables, a device count) becomes the
    runtime's; a number written in the code (``num_replicas=1``) is the author's choice
    and stays, and so do missing arguments: the sampler then asks the process group,
    which the xla backend answers with the same values.
    """

    CODE = "XLA606"
    NAME = "distributed-sampler-shards"
    SUMMARY = "DistributedSampler(num_replicas=..., rank=...) reads xr.world_size() and xr.global_ordinal()"
    FIX = SAFE
    TRIGGERS = (r"DistributedSampler",)
    BEFORE = (
        "from torch.utils.data import DistributedSampler\n\n"
        "sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)\n"
    )
    AFTER = (
        "from torch.utils.data import DistributedSampler\n\n"
        "sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in SAMPLER:
            return updated
        args, changed = list(updated.args), []
        for position, keyword, call in SAMPLER_SHARDS:
            arg = call_arg(original, position, keyword)
            if arg is None or isinstance(arg.value, cst.Integer) or code_of(arg.value) == call:
                continue
            self.ctx.forget_fixes_inside(arg.value)
            at = original.args.index(arg)
            args[at] = args[at].with_changes(value=parse_expr(call))
            changed.append(f"`{keyword}={code_of(arg.value)}` -> `{call}`")
        if not changed:
            return updated
        return self.replace(original, updated, updated.with_changes(args=args), "; ".join(changed), imports=[XR])


BARRIERS = frozenset({"torch.distributed.barrier", "torch.distributed.monitored_barrier"})
ALL_REDUCE = "torch.distributed.all_reduce"
AVERAGE = frozenset({"torch.distributed.ReduceOp.AVG", "torch.distributed.distributed_c10d.ReduceOp.AVG"})


class XlaCollectives(Rule):
    """``dist.barrier()`` becomes ``xm.rendezvous``; an averaging ``all_reduce`` becomes ``xm.all_reduce``.

    The xla backend (``torch_xla/distributed/xla_backend.py``) answers ``barrier`` with a
    finished no-op and raises on ``monitored_barrier``, so a barrier that orders the
    processes (rank 0 writes, the others wait, then read) would silently stop waiting:
    it becomes ``xm.rendezvous("barrier")``, which waits for every process. Its
    ``allreduce`` is ``xm.all_reduce`` in place with SUM, PRODUCT, MIN, MAX, BAND and BOR,
    so ``dist.all_reduce(metric)`` of those stays as it is; ``ReduceOp.AVG`` raises there,
    so ``dist.all_reduce(t, op=ReduceOp.AVG)`` becomes ``xm.all_reduce(xm.REDUCE_SUM, [t],
    scale=1.0 / xr.world_size())`` (in place, as before). ``destroy_process_group()``
    stays: it releases the xla group like any other. A barrier of a subgroup or one
    whose result is used is flagged.
    """

    CODE = "XLA607"
    NAME = "xla-collectives"
    SUMMARY = "dist.barrier() becomes xm.rendezvous('barrier'); all_reduce with AVG becomes xm.all_reduce"
    FIX = SAFE
    TRIGGERS = (r"barrier\(", words("AVG"))
    BEFORE = "import torch.distributed as dist\n\ndist.barrier()\ndist.all_reduce(loss, op=dist.ReduceOp.AVG)\n"
    AFTER = '\nxm.rendezvous("barrier")\nxm.all_reduce(xm.REDUCE_SUM, [loss], scale=1.0 / xr.world_size())\n'

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        name = self.qualname(call.func) if isinstance(call, cst.Call) else None
        if name in BARRIERS:
            if any(a.keyword is None or a.keyword.value not in ("device_ids", "timeout") for a in call.args):
                self.flag(call, f'a barrier of a subgroup: wait with `xm.rendezvous(tag, replicas=[...])`; see {DDP_GUIDE}')
                return updated
            return self.replace(
                original, updated, updated.with_changes(value=parse_expr('xm.rendezvous("barrier")')),
                f"`{code_of(call.func)}()` is a no-op under the xla backend -> `xm.rendezvous(\"barrier\")`, which waits",
                imports=[XM], drop_if_unused=self.ctx.import_behind(call.func),
            )
        if name != ALL_REDUCE:
            return updated
        tensor, op = call_arg(call, 0, "tensor"), call_arg(call, 1, "op")
        if tensor is None or op is None or self.qualname(op.value) not in AVERAGE:
            return updated
        if len(call.args) > 2 or any(a.star for a in call.args):
            self.flag(call, "`ReduceOp.AVG` is not supported by the xla backend: sum and divide by `xr.world_size()`")
            return updated
        replacement = parse_expr(f"xm.all_reduce(xm.REDUCE_SUM, [{code_of(tensor.value)}], scale=1.0 / xr.world_size())")
        return self.replace(
            original, updated, updated.with_changes(value=replacement),
            "`ReduceOp.AVG` is not supported by the xla backend -> `xm.all_reduce` summing in place, scaled by the world size",
            imports=[XM, XR], drop_if_unused=[*self.ctx.import_behind(call.func), *self.ctx.import_behind(op.value)],
        )


# -- what has no direct XLA form (XLA608, XLA609) ----------------------------------------------------

# qualified-name prefix -> where to go instead
MODEL_PARALLEL = {
    "torch.distributed.fsdp": f"use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see {FSDP_GUIDE}",
    "torch.distributed._composable.fsdp": f"use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`), see {FSDP_GUIDE}",
    "torch.distributed.rpc": f"has no XLA counterpart: restructure as data parallelism or SPMD sharding, see {SPMD_GUIDE}",
    "torch.distributed.pipelining": f"express the split as SPMD sharding over a device mesh, see {SPMD_GUIDE}",
    "torch.distributed.pipeline": f"express the split as SPMD sharding over a device mesh, see {SPMD_GUIDE}",
    "torch.distributed.tensor": f"shard with SPMD (`xs.mark_sharding` over an `xs.Mesh`), see {SPMD_GUIDE}",
    "torch.distributed._tensor": f"shard with SPMD (`xs.mark_sharding` over an `xs.Mesh`), see {SPMD_GUIDE}",
    "torch.distributed.device_mesh": f"build an `xs.Mesh` for SPMD instead, see {SPMD_GUIDE}",
}


class ModelParallelism(Rule):
    """FSDP, RPC, pipeline and tensor parallelism are flagged, never half-converted.

    Their PyTorch forms are built on CUDA devices and NCCL (FSDP flattens parameters on
    the GPU, RPC moves tensors between GPU workers, DTensor places shards on a CUDA
    device mesh). PyTorch/XLA has its own FSDP (``XlaFullyShardedDataParallel``, and
    FSDP via SPMD) and expresses tensor and pipeline splits as SPMD sharding annotations.
    Moving a model between them changes how it is wrapped, checkpointed and launched,
    so each use is flagged with the guide to follow.
    """

    CODE = "XLA608"
    NAME = "model-parallelism"
    SUMMARY = "FSDP, RPC, pipeline and tensor parallelism are flagged with PyTorch/XLA's FSDP and SPMD guides"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (r"fsdp|FullyShard|fully_shard|rpc(?<!\wrpc)\b|pipelin|distributed\._?tensor|device_mesh|DeviceMesh|parallelize_module",)
    BEFORE = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nmodel = FSDP(model)\n"
    AFTER = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n" + (
        f"# TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP "
        f"(`torch_xla.distributed.fsdp`, or FSDP via SPMD), see {FSDP_GUIDE}\nmodel = FSDP(model)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func) or ""
        prefix = next((p for p in MODEL_PARALLEL if name == p or name.startswith(p + ".")), None)
        if prefix is not None and not (self.ctx.statements and id(self.ctx.statements[-1]) in self.ctx.todos):
            self.flag(node, f"`{code_of(node.func)}` is `{prefix}`: {MODEL_PARALLEL[prefix]}")


LAUNCH_LINE = re.compile(r"\btorchrun\s+(-|\S+\.py\b)|-m\s+torch\.distributed\.(launch|run)\b")
TPU_LAUNCH = (
    "on a TPU VM, a script that calls `torch_xla.launch` starts with plain `PJRT_DEVICE=TPU python script.py` "
    "(one process per chip); a torchrun-style one keeps `torchrun --nproc_per_node=<chips per host>` with "
    "`PJRT_DEVICE=TPU` (the xla:// rendezvous reads torchrun's variables); on a pod run the command on every "
    "host: `gcloud compute tpus tpu-vm ssh NAME --worker=all --command=...`"
)


class TorchrunLaunchLine(Rule):
    """``torchrun`` / ``python -m torch.distributed.launch`` lines in comments and docstrings.

    The launch instructions a script carries are for GPU machines. PyTorch/XLA starts
    one process per device with ``torch_xla.launch`` (plain ``python``), and its
    ``xla://`` rendezvous also accepts torchrun's environment (see
    ``torch_xla/_internal/rendezvous.py``). The text is the author's, so this only
    reports where the instructions need updating.
    """

    CODE = "XLA609"
    NAME = "torchrun-launch-line"
    SUMMARY = "torchrun / torch.distributed.launch instructions in comments and docstrings: how to launch on a TPU VM"
    FIX = None
    SEVERITY = "info"
    TRIGGERS = (r"torchrun|torch\.distributed\.(launch|run)",)
    BEFORE = "# torchrun --nproc_per_node=8 train.py\n"
    AFTER = "# torchrun --nproc_per_node=8 train.py\n"

    def visit_Comment(self, node: cst.Comment) -> None:
        if LAUNCH_LINE.search(node.value):
            self.note(node, f"launch instructions for GPUs: {TPU_LAUNCH}")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if LAUNCH_LINE.search(node.value):
            self.note(node, f"launch instructions for GPUs: {TPU_LAUNCH}")
