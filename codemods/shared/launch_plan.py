"""What a file's ``mp.spawn`` calls need, found before the traversal reaches them: the
analysis the distributed family's XLA601 (launch.py) and XLA604 (ordinals.py) share, and that
tells the sharding family whether a spawned worker can be called once, as one SPMD program."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from codemods.shared.statements import assigned_names
from migrate_xla.rule.api import FileContext, call_arg, called, children, subtree, words

DEVICE_COUNT = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})
SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"})
# launches already in XLA's form: a count before them breaks them just the same
LAUNCHES = SPAWN | {"torch_xla.launch", "torch_xla.torch_xla.launch", "torch_xla.distributed.xla_multiprocessing.spawn"}
AVAILABILITY = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available"})
LAUNCH_WORDS = words("spawn", "launch")  # the last part of every name in LAUNCHES
LAUNCH_CALL = re.compile(called(LAUNCH_WORDS))  # what a call of one of LAUNCHES spells
# What the import of one of LAUNCHES spells: their modules
LAUNCH_MODULES = ("multiprocessing", "torch_xla")


def is_device_count(ctx: FileContext, node: cst.CSTNode) -> bool:
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


def _free_reads(scope: cst.CSTNode, name: str) -> int:
    """How often the functions defined in ``scope`` read ``name`` from it (a global of the module,
    a closure's variable of a function): those that do not bind a ``name`` of their own."""
    return sum(
        _names(node, name)
        for node in subtree(scope)
        if node is not scope and isinstance(node, cst.FunctionDef) and not _binds(node, name)
    )


def _binds(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is a parameter of ``function`` or assigned in it (and not declared global there)."""
    if any(isinstance(p, cst.Param) and p.name.value == name for p in subtree(function.params)):
        return True
    declared = (n for n in subtree(function.body) if isinstance(n, (cst.Global, cst.Nonlocal)))
    if any(a.name.value == name for n in declared for a in n.names):
        return False
    return name in assigned_names(function.body)


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
    # the parent's own code (the module's statements, the functions that launch): its availability
    # tests, and every call in it (a device another rule writes there, torch_xla.device(), would
    # start the runtime before the launch)
    parent_checks: set[int] = field(default_factory=set)
    parent_calls: set[int] = field(default_factory=set)
    # every launch is an mp.spawn whose worker can be called once instead, as one SPMD program
    # (a function of the file by name, its args a tuple, joined) and no count is kept for more
    once: bool = False


def launch_plan(ctx: FileContext, module: cst.Module) -> LaunchPlan:
    """Where world sizes counted before a spawn go: into the worker, as ``xr.world_size()``.

    Shared by XLA601 and XLA604 (the count before a launch is XLA601's); made once a file.
    Code where no launch word is called or imported under another name, or whose imports
    do not name the launches' modules, has no launch, and no plan: the whole tree is not walked.
    A launch in a slice needs the whole file: the plan follows the spawned worker and the
    counts in the parent's code.
    """
    if "launch_plan" not in ctx.shared:
        if not any(module in ctx.source for module in LAUNCH_MODULES) or not LAUNCH_CALL.search(ctx.source):
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
    calls: list[tuple[cst.Call, cst.CSTNode]] = []

    stack: list[tuple[cst.CSTNode, cst.CSTNode]] = [(module, module)]  # code order: imports before their uses
    while stack:
        node, scope = stack.pop()
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            names.learn_import(node)
        scope = node if isinstance(node, cst.FunctionDef) else scope
        if isinstance(node, cst.Call) and names.qualname(node.func) in LAUNCHES:
            found.append((node, scope))
        elif is_device_count(names, node):
            counted.append((node, scope))
        elif isinstance(node, cst.Call):
            calls.append((node, scope))
        stack.extend((child, scope) for child in reversed(children(node)))
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
            if not (
                isinstance(assign, cst.Assign)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
                and is_device_count(names, assign.value)
            ):
                continue
            count = assign.targets[0].target.value
            if _names(call, count) == 0:
                continue
            place = next(
                (i for i, e in enumerate(elements) if isinstance(e.value, cst.Name) and e.value.value == count), None
            )
            movable = place is None or (
                worker is not None
                and _names(module, worker.name.value, scoped=False) == 2  # its def and this spawn: no other caller
                and place + 1 < len(worker.params.params)
            )
            if movable and _names(scope, count) + _free_reads(scope, count) == 1 + _names(call, count):
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
    parent_calls = [call for call, scope in calls if id(scope) in parents]
    plan.parent_calls = {id(call) for call in parent_calls}
    plan.parent_checks = {id(call) for call in parent_calls if names.qualname(call.func) in AVAILABILITY}
    plan.once = bool(found) and not plan.kept_counts and all(_callable_once(names, call, defs) for call, _ in found)
    return plan


def _callable_once(names: FileContext, call: cst.Call, defs: dict[str, cst.FunctionDef]) -> bool:
    """Whether the launch ``call`` is ``mp.spawn(fn, args=(...), ...)`` of a function ``fn`` of the
    file that it waits for, so that ``fn(0, ...)`` can stand for it."""
    if names.qualname(call.func) not in SPAWN or any(a.star for a in call.args):
        return False
    fn, given, join = call_arg(call, 0, "fn"), call_arg(call, 1, "args"), call_arg(call, 3, "join")
    return (
        fn is not None
        and isinstance(fn.value, cst.Name)
        and fn.value.value in defs
        and (given is None or isinstance(given.value, cst.Tuple))
        and (join is None or (isinstance(join.value, cst.Name) and join.value.value == "True"))
        and sum(a.keyword is None for a in call.args) <= 5  # spawn's own positional parameters
    )
