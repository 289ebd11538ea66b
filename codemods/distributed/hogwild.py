"""How a file starts its Hogwild workers, found before the traversal reaches them: what
XLA611 (shared_memory.py) rewrites under ``--unsafe-fixes``, or why it cannot."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.shared.launch_plan import SPAWN
from codemods.shared.statements import assigned_names
from migrate_xla.rule.api import FileContext, call_arg, code_nodes, code_of, subtree

PROCESS = frozenset({"torch.multiprocessing.Process", "multiprocessing.Process"})
START_METHOD = frozenset({"torch.multiprocessing.set_start_method", "multiprocessing.set_start_method"})
WORKER = "_mp_fn"  # what --target multiprocess (XLA659) names the launched function too
ORDINAL = "xr.global_ordinal()"


@dataclass
class HogwildPlan:
    """The edits of one Hogwild launch, or why there are none (``problem``)."""

    problem: str | None = None
    quiet: bool = False  # no `__main__` block at all (a snippet, a library): the problem goes unsaid
    share: cst.SimpleStatementLine | None = None  # `model.share_memory()`: removed
    model: str = ""
    launch: list[cst.BaseStatement] = field(default_factory=list)  # the first becomes `call`, the others go
    call: str = ""  # the worker called in each process: `train(xr.global_ordinal(), args, model)`
    starter: cst.BaseExpression | None = None  # `mp.Process` / `mp.spawn`: its import may go
    guard: cst.If | None = None  # the `__main__` block, launched by torch_xla.launch(_mp_fn)
    main: str | None = None  # the function the guard calls, when the launch is in it
    shared: list[str] = field(default_factory=list)  # names the module's functions read: `global`


def _is_main_guard(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.If) or not isinstance(node.test, cst.Comparison):
        return False
    return " ".join(code_of(node.test).replace("'", '"').split()) in (
        '__name__ == "__main__"',
        '"__main__" == __name__',
    )


def _expr(statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The expression of a one-expression statement line."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        return small.value if isinstance(small, cst.Expr) else None
    return None


def _assign(statement: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """``name = value`` as a statement line of its own."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small.targets[0].target.value, small.value
    return None


def _method_loop(statement: cst.CSTNode, items: str, method: str) -> bool:
    """``for p in items: p.start()`` (or ``.join()``)."""
    if not (
        isinstance(statement, cst.For)
        and statement.orelse is None
        and isinstance(statement.target, cst.Name)
        and isinstance(statement.iter, cst.Name)
        and statement.iter.value == items
        and isinstance(statement.body, cst.IndentedBlock)
        and len(statement.body.body) == 1
    ):
        return False
    call = _expr(statement.body.body[0])
    return isinstance(call, cst.Call) and not call.args and code_of(call.func) == f"{statement.target.value}.{method}"


def _uses(node: cst.CSTNode, name: str) -> int:
    return sum(1 for n in subtree(node) if isinstance(n, cst.Name) and n.value == name)


def hogwild_plan(module: cst.Module) -> HogwildPlan:
    names = FileContext()
    for node in code_nodes(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            names.learn_import(node)
    shares = [
        n
        for n in code_nodes(module)
        if isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == "share_memory"
        and not n.args
    ]
    if len(shares) != 1:
        return HogwildPlan("the file calls `share_memory()` more than once (a helper shares the model too)")
    guards = [s for s in module.body if _is_main_guard(s)]
    if len(guards) != 1 or guards[0].orelse is not None:
        return HogwildPlan('the workers are not started from one `if __name__ == "__main__":` block', quiet=not guards)
    guard = guards[0]
    plan = HogwildPlan(guard=guard)
    block = list(guard.body.body)
    called = _expr(block[0]) if len(block) == 1 else None
    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if isinstance(called, cst.Call) and not called.args and isinstance(called.func, cst.Name):
        main = defs.get(called.func.value)
        if main is not None and not main.params.params and isinstance(main.body, cst.IndentedBlock):
            plan.main, block = main.name.value, list(main.body.body)
    if WORKER in defs:
        return HogwildPlan(f"the file defines `{WORKER}` already, the name of the launched function")
    at = next((i for i, s in enumerate(block) if _expr(s) is shares[0]), None)
    if at is None or not isinstance(shares[0].func.value, cst.Name):
        return HogwildPlan(
            "`share_memory()` is not a statement of the block that starts the workers, on the model's name"
        )
    plan.share, plan.model = block[at], shares[0].func.value.value
    if not any((a := _assign(s)) is not None and a[0] == plan.model for s in block[:at]):
        return HogwildPlan(f"`{plan.model}` is not built in the block that starts the workers")
    problem = _launch(plan, names, block, at + 1, defs)
    if problem is not None:
        return HogwildPlan(problem)
    # how the workers were to start goes with them: in a launched process the start method is set
    # already (multiprocessing's spawn passes it on), and `set_start_method` without force raises
    plan.launch += [s for s in block if isinstance(c := _expr(s), cst.Call) and names.qualname(c.func) in START_METHOD]
    # the launch's list of processes must serve nothing else
    kept = [s for s in block if s is not plan.share and not any(s is launched for launched in plan.launch)]
    read = sorted(
        name for name in {n for s in plan.launch for n in assigned_names(s)} if any(_uses(s, name) for s in kept)
    )
    if read:
        return HogwildPlan(f"{', '.join(f'`{name}`' for name in read)}, made by the workers' launch, read after it")
    if plan.main is None:
        bound = {name for s in block for name in assigned_names(s)}
        read = set()
        for d in module.body:
            if isinstance(d, cst.FunctionDef):
                params = {p.name.value for p in subtree(d.params) if isinstance(p, cst.Param)}
                own = params.union(assigned_names(d.body))
                read |= {n.value for n in subtree(d.body) if isinstance(n, cst.Name)} - own
        bound -= {name for s in plan.launch for name in assigned_names(s)}
        plan.shared = sorted(bound & read)
    return plan


def _launch(plan: HogwildPlan, names: FileContext, block: list, start: int, defs: dict) -> str | None:
    """Finds the launch after ``share_memory()``: its statements, the worker and its arguments."""
    for i in range(start, len(block)):
        statement = block[i]
        for node in subtree(statement):
            if not isinstance(node, cst.Call):
                continue
            qualname = names.qualname(node.func)
            if qualname in SPAWN:
                return _spawn(plan, statement, node, defs)
            if qualname in PROCESS or (
                qualname is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "Process"
            ):
                return _processes(plan, block, i, node, defs)
    return "no `mp.Process` or `mp.spawn` launch follows `share_memory()` in its block"


def _worker_call(plan: HogwildPlan, fn: cst.Arg | None, given: cst.Arg | None, rank: str | None, defs) -> str | None:
    if fn is None or not isinstance(fn.value, cst.Name):
        return "the workers' function is not named at the launch"
    if fn.value.value not in defs:
        # mnist_hogwild's `from train import train`: its optimizer steps are in the other module
        return (
            f"the workers' function `{fn.value.value}` is not defined in this file, so the optimizer steps it "
            "makes cannot be rewritten here: each must average the replicas' gradients "
            "(`xm.optimizer_step(optimizer)`) for the processes to train one model; define the worker here, "
            "or launch `def _mp_fn(index)` with the same block by hand and change its steps"
        )
    if (
        given is None
        or not isinstance(given.value, cst.Tuple)
        or any(isinstance(e, cst.StarredElement) for e in given.value.elements)
    ):
        return "the workers' arguments are not a tuple written at the launch"
    elements = [code_of(e.value) for e in given.value.elements]
    if elements.count(plan.model) != 1:
        return f"`{plan.model}` is not passed to the workers as one of their arguments"
    if rank is None:
        elements.insert(0, ORDINAL)
    else:
        if any(_uses(e.value, rank) for e in given.value.elements if code_of(e.value) != rank):
            return f"the worker's rank `{rank}` is used in an expression of its arguments"
        elements = [ORDINAL if e == rank else e for e in elements]
    plan.call = f"{fn.value.value}({', '.join(elements)})"
    return None


def _spawn(plan: HogwildPlan, statement, call: cst.Call, defs) -> str | None:
    if _expr(statement) is not call:
        return "the `mp.spawn` call is not a statement of its own"
    join = call_arg(call, 3, "join")
    if join is not None and code_of(join.value) != "True":
        return "`mp.spawn(..., join=False)`: the parent goes on while the workers train"
    plan.launch, plan.starter = [statement], call.func
    return _worker_call(plan, call_arg(call, 0, "fn"), call_arg(call, 1, "args"), None, defs)


def _processes(plan: HogwildPlan, block: list, i: int, call: cst.Call, defs) -> str | None:
    """``for rank in range(n): p = mp.Process(...); p.start(); ps.append(p)`` then ``for p in ps: p.join()``,
    or ``ps = [mp.Process(...) for rank in range(n)]`` then the start and join loops."""
    statement, plan.starter = block[i], call.func
    target, given = call_arg(call, None, "target"), call_arg(call, None, "args")
    if any(a.keyword is None or a.keyword.value not in ("target", "args") for a in call.args):
        return "`Process` is given more than its `target` and `args`"
    items: str | None = None
    launch = [statement]
    if isinstance(statement, cst.For) and isinstance(statement.target, cst.Name) and statement.orelse is None:
        rank = statement.target.value
        body = list(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else []
        started = _expr(body[0]) if len(body) == 1 else None
        if isinstance(started, cst.Call) and code_of(started.func) == f"{code_of(call)}.start" and not started.args:
            plan.launch = launch  # `mp.Process(...).start()`: nothing to join
            return _worker_call(plan, target, given, rank, defs)
        made = _assign(body[0]) if body else None
        if made is None or made[1] is not call:
            return "the loop that starts the workers does more than make, start and collect them"
        process = made[0]
        rest = [code_of(_expr(s)) if _expr(s) is not None else "" for s in body[1:]]
        if f"{process}.start()" not in rest:
            return "the loop that starts the workers does more than make, start and collect them"
        for line in rest:
            if line == f"{process}.start()":
                continue
            if not (line.endswith(f".append({process})") and line.count(".") == 1):
                return "the loop that starts the workers does more than make, start and collect them"
            items = line.split(".")[0]
        if items is not None and i > 0 and (a := _assign(block[i - 1])) is not None and a[0] == items:
            if isinstance(a[1], cst.List) and not a[1].elements:
                launch.insert(0, block[i - 1])
    else:
        made = _assign(statement)
        comp = made[1] if made is not None else None
        if not (
            isinstance(comp, cst.ListComp)
            and comp.elt is call
            and comp.for_in.inner_for_in is None
            and not comp.for_in.ifs
            and isinstance(comp.for_in.target, cst.Name)
        ):
            return "the workers are not made by a `for` loop or a list comprehension of their own"
        rank, items = comp.for_in.target.value, made[0]
        if i + 1 >= len(block) or not _method_loop(block[i + 1], items, "start"):
            return "the workers made by the list comprehension are not started by the loop after it"
        launch.append(block[i + 1])
    if items is not None:
        after = i + len(launch) - (1 if launch[0] is not statement else 0)
        joins = after if after < len(block) and _method_loop(block[after], items, "join") else None
        if joins is None:
            return "the workers are not joined by the loop right after they are started"
        launch.append(block[joins])
    plan.launch = launch
    return _worker_call(plan, target, given, rank, defs)
