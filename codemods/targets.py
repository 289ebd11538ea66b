"""XLA65x-XLA69x: whole-script forms that ``--target multiprocess`` and ``--target spmd`` ask for.

The migration guide's "Distributed Training" section (one process per device, launched by
``torch_xla.launch``, gradients reduced by ``xm.optimizer_step``, each process reading its
own shard through a ``DistributedSampler`` and ``pl.MpDeviceLoader``), and the PyTorch/XLA
SPMD user guide (https://docs.pytorch.org/xla/master/perf/spmd_basic.html: one process
drives every device; ``xr.use_spmd()``, a device mesh, inputs sharded on the batch
dimension, the model replicated). Only the target named on the command line enables these
rules. A script that already distributes itself (``mp.spawn``, DDP, ``torch_xla.launch``)
is left to the XLA6xx distributed rules under ``multiprocess``, and flagged under ``spmd``,
which cannot be mixed with multi-processing.
"""

from __future__ import annotations

import re
from typing import Sequence

import libcst as cst

from codemods.lazy_execution import OPTIMIZER_NAME, _call_of, _trains
from codemods.recompilation import DATALOADERS, EVAL_WORDS, _words
from migrate_xla.rule import (
    EQUAL, PL, SAFE, TORCH_XLA, XM, XR, Import, Rule, append_keyword, call_arg, code_of, drop_items, last_name,
    parse_expr, string_value, subtree,
)

XS = Import("torch_xla.distributed.spmd", asname="xs")
DISTRIBUTED_SAMPLER = Import("torch.utils.data.distributed", "DistributedSampler")
SPMD_DOC = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"

# What makes a script distributed already: it starts processes or groups them itself.
LAUNCHERS = {
    "torch.multiprocessing.spawn", "torch.multiprocessing.start_processes", "torch_xla.launch",
    "torch_xla.distributed.xla_multiprocessing.spawn", "torch.distributed.init_process_group",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.distributed.launch", "torch.distributed.run",
}
DISTRIBUTED_TEXT = re.compile(
    r"\b(?:spawn|start_processes|launch|init_process_group|DistributedDataParallel|_mp_fn|use_spmd)\b"
)
WORKER = "_mp_fn"
MASTER_GUARD = re.compile(r"master|rank|ordinal", re.IGNORECASE)
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
LOGGER_NAME = re.compile(r"log", re.IGNORECASE)
EXITS = {"sys.exit", "os._exit", "exit", "quit"}


def _distributed(rule: Rule, module: cst.Module) -> bool:
    """Whether the file launches processes, groups them, or is already in a target's form.

    Decided on the whole file (``ctx.shared``, once for all target rules), by the launcher
    calls and classes it names, resolved through its imports.
    """
    if "distributed" not in rule.ctx.shared:
        text = rule.ctx.source
        found = bool(DISTRIBUTED_TEXT.search(text)) and any(
            isinstance(node, (cst.Name, cst.Attribute)) and _launcher(rule, node) for node in subtree(module)
        )
        rule.ctx.shared["distributed"] = found or f"def {WORKER}(" in text or "use_spmd()" in text
    return bool(rule.ctx.shared["distributed"])


def _launcher(rule: Rule, node: cst.CSTNode) -> bool:
    return rule.qualname(node) in LAUNCHERS


class TargetRule(Rule):
    """A rule of a target's whole-script form. It asks about the whole file at the start:
    the engine learns imports as it meets them, so the file's imports are learned first
    (once for all target rules), and a file that ``skips`` (by default one that launches
    processes, groups them or is in a target's form already) is left alone."""

    skip = False
    WHOLE_MODULE = True  # it moves and wraps the script's code, and reads its whole text (ctx.source)

    def visit_Module(self, node: cst.Module) -> None:
        if not self.ctx.shared.get("imports learned"):
            self.ctx.shared["imports learned"] = True
            for statement in subtree(node):
                if isinstance(statement, (cst.Import, cst.ImportFrom)):
                    self.ctx.learn_import(statement)
        self.skip = self.skips(node)

    def skips(self, module: cst.Module) -> bool:
        return _distributed(self, module)


def _is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":``, either way round."""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = {code_of(test.left).strip(), code_of(test.comparisons[0].comparator).strip()}
    return "__name__" in sides and any(string_value(parse_expr(s)) == "__main__" for s in sides - {"__name__"})


def _statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _removed_placeholder(statement: cst.CSTNode) -> bool:
    from migrate_xla.engine import _is_removed  # lines other rules emptied, dropped after the module

    return _is_removed(statement)


# -- multiprocess ----------------------------------------------------------------------


class OptimizerStepAcrossReplicas(TargetRule):
    """``optimizer.step()`` becomes ``xm.optimizer_step(optimizer)`` in the multi-process form.

    Guide, "Distributed Training": ``xm.optimizer_step`` all-reduces (averages) the gradients
    of every replica before stepping; a plain ``optimizer.step()`` would let each process
    train its own model. Where XLA201's ``torch_xla.sync()`` follows the step, the two
    become one ``xm.optimizer_step(optimizer, barrier=True)``: the barrier is that same
    sync (torch_xla 2.9 calls ``torch_xla.sync()``), so the step's graph is still cut once,
    and XLA201 counts ``xm.optimizer_step`` as the step's sync on later runs. Optimizers are
    matched by name as XLA201 does; a ``scaler.step(optimizer)`` that stays (float16
    GradScaler) is flagged: the scaler must see reduced gradients (call
    ``xm.reduce_gradients(optimizer)`` before it).
    """

    CODE = "XLA650"
    NAME = "xm-optimizer-step"
    SUMMARY = "optimizer.step() (and its sync) -> xm.optimizer_step(optimizer), which reduces gradients across replicas"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    TRIGGERS = (r"\.step\(",)
    BEFORE = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"
    AFTER = "for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    xm.optimizer_step(optimizer, barrier=True)\n"

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        if self.skip:
            return updated
        body = list(updated.body)
        index = 0
        while index < len(body):
            call = _call_of(body[index])
            if call is not None and self._scaler_step(call):
                self.flag(self._original(original, call) or original, (
                    f"`{code_of(call)}` in the multi-process form: reduce the gradients first, "
                    f"`xm.reduce_gradients({code_of(call.args[0].value)})`, so every replica steps alike"
                ))
            elif call is not None and self._optimizer_step(call):
                after = next((i for i in range(index + 1, len(body)) if not _removed_placeholder(body[i])), None)
                barrier = after is not None and self._sync(body[after])
                optimizer = code_of(call.func.value)
                new = f"xm.optimizer_step({optimizer}{', barrier=True' if barrier else ''})"
                self.replace(
                    self._original(original, call) or original, updated, None,
                    f"`{optimizer}.step()`{' and its `torch_xla.sync()`' if barrier else ''} -> `{new}`: "
                    "gradients are averaged across the replicas before the step",
                    imports=[XM],
                )
                body[index] = body[index].with_changes(body=[cst.Expr(parse_expr(new))])
                if barrier:
                    del body[after]
            index += 1
        return updated.with_changes(body=body) if self.fixing and body != list(updated.body) else updated

    def _optimizer_step(self, call: cst.Call) -> bool:
        owner = last_name(call.func.value) if isinstance(call.func, cst.Attribute) else ""
        return (
            isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and not call.args
            and bool(OPTIMIZER_NAME.search(owner)) and "sched" not in owner.lower()
        )

    def _scaler_step(self, call: cst.Call) -> bool:
        return (
            isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and len(call.args) == 1
            and bool(OPTIMIZER_NAME.search(last_name(call.args[0].value)))
        )

    def _sync(self, statement: cst.BaseStatement) -> bool:
        call = _call_of(statement)
        return call is not None and not call.args and (
            self.qualname(call.func) == "torch_xla.sync" or code_of(call.func) == "torch_xla.sync"
        )

    @staticmethod
    def _original(block: cst.IndentedBlock, call: cst.Call) -> cst.CSTNode | None:
        """The original statement of a call no earlier rule changed (for the finding's line)."""
        return next((s for s in block.body if (c := _call_of(s)) is not None and c.deep_equals(call)), None)


class DistributedSamplerForTraining(TargetRule):
    """The training DataLoader reads its shard through a ``DistributedSampler``.

    Guide, "Distributed Training" and "Data Loading": each process must see its own
    ``1/world_size`` of the data, so ``DataLoader(dataset, ...)`` gets
    ``sampler=DistributedSampler(dataset, num_replicas=xr.world_size(),
    rank=xr.global_ordinal(), shuffle=...)``; the loader's ``shuffle`` moves to the
    sampler (a DataLoader refuses both), also out of a ``**kwargs`` dict written in the
    same function, and an epoch loop that uses the loader calls
    ``loader.sampler.set_epoch(epoch)`` first, so each epoch shuffles anew. A dataset
    built in the call is bound to a name first (it is given twice). The training loader
    is the one named for training or shuffling; evaluation loaders keep their data
    whole. Loaders with a sampler of their own, or whose ``**kwargs`` the rule cannot
    read, are flagged. At world size 1 the sampler yields every sample, in the order of
    ``torch.randperm`` seeded with ``epoch`` (not the DataLoader's own random order).
    """

    CODE = "XLA651"
    NAME = "distributed-sampler"
    SUMMARY = "the training DataLoader gets a DistributedSampler over xr.world_size() replicas, with set_epoch"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    TRIGGERS = (r"DataLoader",)
    BEFORE = (
        "from torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(train_set, batch_size=64, shuffle=True)\n"
        "for epoch in range(3):\n"
        "    train(model, train_loader)\n"
    )
    AFTER = (
        "from torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set, "
        "num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))\n"
        "for epoch in range(3):\n"
        "    train_loader.sampler.set_epoch(epoch)\n"
        "    train(model, train_loader)\n"
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.names = {n.value for n in subtree(node) if isinstance(n, cst.Name)}

    def skips(self, module: cst.Module) -> bool:
        # a file that builds a DistributedSampler already shards its data itself
        return _distributed(self, module) or "DistributedSampler(" in self.ctx.source

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        return self._in_block(original, updated)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self._in_block(original, updated)

    def _in_block(self, original, updated):
        if self.skip:
            return updated
        self.original_body = original.body
        self.flagged: dict[int, cst.CSTNode] = {}
        body = list(updated.body)
        for index in range(len(body) - 1, -1, -1):
            found = self._training_loader(body[index])
            if found is not None:
                body = self._shard(body, index, *found) or body
        for index, statement in enumerate(body):
            if id(statement) in self.flagged:
                body[index] = self.ctx.attach_todos(self.flagged.pop(id(statement)), statement)
        return updated.with_changes(body=body) if body != list(updated.body) else updated

    def _training_loader(self, statement: cst.BaseStatement):
        """(loader name, DataLoader call) of ``name = DataLoader(...)`` for training, else None."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return None
        assign = statement.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)):
            return None
        target, call = assign.targets[0].target, assign.value
        if not isinstance(target, (cst.Name, cst.Attribute)) or self.qualname(call.func) not in DATALOADERS:
            return None
        words = _words(code_of(target)) | _words(code_of(call.args[0].value) if call.args else "")
        shuffle = call_arg(call, 2, "shuffle")
        trains = any(w.startswith("train") for w in words) or (shuffle is not None and code_of(shuffle.value) == "True")
        if not trains or words & EVAL_WORDS:
            return None
        return code_of(target), call

    def _flag_at(self, original_body, statement: cst.SimpleStatementLine, message: str) -> None:
        """A TODO comment above the loader's own line (the engine would put it above the block's owner)."""
        target = code_of(statement.body[0].targets[0].target)
        first = next((s for s in original_body if isinstance(s, cst.SimpleStatementLine)
                      and isinstance(s.body[0], cst.Assign) and code_of(s.body[0].targets[0].target) == target), statement)
        self.ctx.statements.append(first)
        self.flag(first, message)
        self.ctx.statements.pop()
        self.flagged[id(statement)] = first

    def _shard(self, body: list, index: int, loader: str, call: cst.Call) -> list | None:
        statement = body[index]
        if call_arg(call, 3, "sampler") is not None or call_arg(call, 4, "batch_sampler") is not None:
            self._flag_at(self.original_body, statement, f"`{loader}` has a sampler of its own: make it a shard of `xr.world_size()` "
                      "(a DistributedSampler's job) so each process reads different data")
            return None
        dataset = call_arg(call, 0, "dataset")
        shuffle = call_arg(call, 2, "shuffle")
        if dataset is None or dataset.star or (shuffle is not None and shuffle.keyword is None):
            self._flag_at(self.original_body, statement, f"`{loader}`: give the DataLoader its dataset and `shuffle` by keyword or "
                      "first argument, then a `DistributedSampler(dataset, num_replicas=xr.world_size(), "
                      "rank=xr.global_ordinal())`")
            return None
        found = self._shuffle_in_kwargs(body, index, call)
        if found is None:
            self._flag_at(self.original_body, statement, f"`{loader}`: its `**kwargs` may set `shuffle`, which a DistributedSampler "
                      "takes over; write them out, then give it `sampler=DistributedSampler(...)`")
            return None
        shuffle_value, kwargs_at, kwargs_dict = found
        if shuffle is not None:
            shuffle_value = shuffle.value
        if not self.fixing:
            self.replace(call, None, None, f"`{loader}` reads its shard of the data: `sampler=DistributedSampler(...)`",
                         imports=[DISTRIBUTED_SAMPLER, XR])
            return None
        body = list(body)
        if kwargs_at is not None:  # "shuffle" goes from the kwargs dict it was written in
            line = body[kwargs_at]
            assign = line.body[0]
            elements = drop_items(kwargs_dict.elements, lambda e: string_value(e.key) == "shuffle")
            body[kwargs_at] = line.with_changes(body=[assign.with_changes(value=kwargs_dict.with_changes(elements=elements))])
        hoisted = []
        data = dataset.value
        if not isinstance(data, (cst.Name, cst.Attribute)):
            name = re.sub(r"loader$|$", "dataset", loader.split(".")[-1], count=1)
            name = name if name.endswith("dataset") and name != "dataset" else f"{loader.split('.')[-1]}_dataset"
            while name in self.names:
                name = f"_{name}"
            self.names.add(name)
            hoisted = [body[index].with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(name))], data)])]
            data = cst.Name(name)
        sampler = parse_expr(
            f"DistributedSampler({code_of(data)}, num_replicas=xr.world_size(), rank=xr.global_ordinal(), "
            f"shuffle={code_of(shuffle_value) if shuffle_value is not None else 'False'})"
        )
        args = [a.with_changes(value=data) if a is dataset else a for a in call.args]
        new_call = call.with_changes(args=drop_items(args, lambda a: a.keyword is not None and a.keyword.value == "shuffle"))
        new_call = append_keyword(new_call, "sampler", sampler)
        line = body[index]
        assign = line.body[0]
        if hoisted:
            hoisted[0] = hoisted[0].with_changes(leading_lines=line.leading_lines)
            line = line.with_changes(leading_lines=[])
        body[index] = line.with_changes(body=[assign.with_changes(value=new_call)])
        epoch = self._set_epoch(body, index, loader)
        self.replace(
            call, None, None,
            f"`{loader}` reads its shard of the data: `sampler=DistributedSampler(..., "
            f"num_replicas=xr.world_size(), rank=xr.global_ordinal())`"
            + (", `shuffle` moved to it" if shuffle_value is not None else "")
            + (f"; `{loader}.sampler.set_epoch({epoch})` in the epoch loop" if epoch else ""),
            imports=[DISTRIBUTED_SAMPLER, XR],
        )
        return [*body[:index], *hoisted, *body[index:]]

    def _shuffle_in_kwargs(self, body: list, index: int, call: cst.Call):
        """(shuffle value or None, index of the kwargs dict's line, the dict) for ``**name``.

        None when a ``**kwargs`` cannot be read: its one dict literal must be assigned in
        this block before the loader, and only ``.update()``-d with dict literals (or
        names bound to dict literals) that leave ``shuffle`` alone.
        """
        stars = [a for a in call.args if a.star == "**"]
        if not stars:
            return None, None, None
        if len(stars) > 1 or not isinstance(stars[0].value, cst.Name):
            return None
        name = stars[0].value.value
        literal = [
            i for i, s in enumerate(body[:index])
            if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
            and code_of(s.body[0].targets[0].target) == name
        ]
        if len(literal) != 1 or not isinstance(body[literal[0]].body[0].value, cst.Dict):
            return None
        kwargs = body[literal[0]].body[0].value
        dicts = {id(kwargs)}
        uses = 0
        for statement in body:
            for node in subtree(statement):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and code_of(node.func.value) == name:
                    if node.func.attr.value != "update" or len(node.args) != 1:
                        return None
                    added = self._dict_literal(body, node.args[0].value)
                    if added is None or any(string_value(e.key) == "shuffle" for e in added.elements if isinstance(e, cst.DictElement)):
                        return None
                    dicts.add(id(node.func.value))
                elif isinstance(node, cst.Name) and node.value == name:
                    uses += 1
        # the name's uses: its assignment, the ** of this loader and each .update() receiver
        if uses != 2 + len(dicts) - 1:
            return None
        entries = [e for e in kwargs.elements if isinstance(e, cst.DictElement) and string_value(e.key) == "shuffle"]
        if any(not isinstance(e, cst.DictElement) for e in kwargs.elements) or len(entries) > 1:
            return None
        return (entries[0].value if entries else None), (literal[0] if entries else None), kwargs

    @staticmethod
    def _dict_literal(body: list, value: cst.BaseExpression) -> cst.Dict | None:
        if isinstance(value, cst.Dict):
            return value
        if not isinstance(value, cst.Name):
            return None
        bound = [
            n.value for s in body for n in subtree(s)
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and code_of(n.targets[0].target) == value.value
        ]
        return bound[0] if len(bound) == 1 and isinstance(bound[0], cst.Dict) else None

    @staticmethod
    def _set_epoch(body: list, index: int, loader: str) -> str | None:
        """Calls ``loader.sampler.set_epoch(epoch)`` first in the epoch loop that uses ``loader``."""
        for at in range(index + 1, len(body)):
            loop = body[at]
            if not isinstance(loop, cst.For) or not any(code_of(n) == loader for n in subtree(loop.body) if isinstance(n, (cst.Name, cst.Attribute))):
                continue
            if not isinstance(loop.target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock):
                return None
            epoch = loop.target.value
            call = _statement(f"{loader}.sampler.set_epoch({epoch})")
            body[at] = loop.with_changes(body=loop.body.with_changes(body=[call, *loop.body.body]))
            return epoch
        return None


class MasterOnlyOutput(TargetRule):
    """Printing and logging in the workers happen on the master ordinal only.

    Guide, "Distributed Training": every process runs the same code, so a ``print`` or
    ``logger.info`` in the training code would repeat once per device. Runs of such
    statements inside functions go under one ``if xm.is_master_ordinal(local=False):``
    (the global master, as the guide's example). Statements already under a test that
    names a rank, an ordinal or the master are left alone, and so is module-level code,
    which must not ask for the ordinal before ``torch_xla.launch`` starts the runtime.
    Saving needs nothing: ``xm.save`` (XLA501) writes from the master only by default.
    """

    CODE = "XLA652"
    NAME = "master-only-output"
    SUMMARY = "print / logging in the training code runs under xm.is_master_ordinal() only"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    TRIGGERS = (r"print\(|log",)
    BEFORE = "def train(loader):\n    for x in loader:\n        print(x)\n"
    AFTER = "def train(loader):\n    for x in loader:\n        if xm.is_master_ordinal(local=False):\n            print(x)\n"

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        stack = self.ctx.statements
        if self.skip or not any(isinstance(s, cst.FunctionDef) for s in stack):
            return updated
        if any(isinstance(s, cst.If) and MASTER_GUARD.search(code_of(s.test)) for s in stack):
            return updated
        body, run, changed = [], [], False
        for statement in [*updated.body, None]:
            if statement is not None and self._output(statement):
                run.append(statement)
                continue
            if run:
                guard = cst.If(
                    test=parse_expr("xm.is_master_ordinal(local=False)"),
                    body=cst.IndentedBlock(body=[run[0].with_changes(leading_lines=[]), *run[1:]]),
                    leading_lines=run[0].leading_lines,
                )
                first = next((s for s in original.body if s.deep_equals(run[0])), original)
                self.replace(first, updated, None, f"{len(run)} print/log statement{'s' if len(run) > 1 else ''} "
                             "now run on the master ordinal only", imports=[XM])
                body.append(guard)
                run, changed = [], True
            if statement is not None:
                body.append(statement)
        return updated.with_changes(body=body) if self.fixing and changed else updated

    def _output(self, statement: cst.BaseStatement) -> bool:
        call = _call_of(statement)
        if call is None:
            return False
        func = call.func
        if isinstance(func, cst.Name):
            return func.value == "print" and "print" not in self.ctx.aliases
        name = self.qualname(func) or ""
        if name.startswith("logging."):
            return True
        return (
            isinstance(func, cst.Attribute) and func.attr.value in LOG_METHODS
            and bool(LOGGER_NAME.search(last_name(func.value))) and not name
        )


class MultiprocessWorker(TargetRule):
    """The script's training code runs in ``def _mp_fn(index)``, launched by ``torch_xla.launch``.

    Guide, "Distributed Training" and its script structure: ``torch_xla.launch(_mp_fn)``
    under ``if __name__ == "__main__":`` starts one process per device and calls
    ``_mp_fn(index)`` in each. What moves into the worker: the body of the ``__main__``
    block (``main()`` stays the script's own function, now called from ``_mp_fn``) and
    every module-level statement of a flat script after its imports, so device queries
    and the model run in the workers, after the runtime started; the launched processes
    re-import the module (spawn), so module-level code must not touch the device.
    Imports, functions, classes and literal constants stay. Names the moved code binds
    and the module's functions read are declared ``global`` in the worker. Not converted,
    and flagged instead: a ``__main__`` block with an ``else``, or one that ends the
    process with a status (``sys.exit(main())``): the workers' return values are lost.
    A file without a ``__main__`` block or module-level training is a library: its
    training code is converted where it is (XLA650-XLA652), its structure is kept.
    """

    CODE = "XLA659"
    NAME = "multiprocess-worker"
    SUMMARY = "the training script runs in def _mp_fn(index), launched by torch_xla.launch(_mp_fn)"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    TRIGGERS = (r"__main__|\.backward\(",)
    BEFORE = "def main():\n    train()\n\n\nif __name__ == \"__main__\":\n    main()\n"
    AFTER = (
        "def main():\n    train()\n\n\ndef _mp_fn(index):\n    main()\n\n\n"
        "if __name__ == \"__main__\":\n    torch_xla.launch(_mp_fn)\n"
    )

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        # Classified on the migrated statements: earlier rules may have added some (XLA651
        # binds a dataset to a name), so positions in the original no longer line up.
        if self.skip:
            return updated
        body = updated.body
        last_import = max((i for i, s in enumerate(body) if _is_import_line(s)), default=-1)
        moved = [i for i, s in enumerate(body) if i > last_import and not self._stays(s, i) and not _removed_placeholder(s)]
        guard = [i for i in moved if _is_main_guard(body[i])]
        trains = any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward"
            for i in moved if i not in guard for n in subtree(body[i])
        )
        if not guard and not trains:
            return updated  # a library module: nothing of it runs on its own
        report_at = next((s for s in original.body if _is_main_guard(s)), None) if guard else None
        report_at = report_at or next(s for s in original.body if not (self._stays(s, 1) or _is_main_guard(s)))
        problem = self._problem(body, guard)
        if problem is not None:
            self.ctx.statements.append(report_at)
            self.flag(report_at, problem)
            self.ctx.statements.pop()
            at = guard[0] if guard else moved[0]
            return updated.with_changes(body=[*body[:at], self.ctx.attach_todos(report_at, body[at]), *body[at + 1:]])
        worker: list[cst.BaseStatement] = []
        for i in moved:
            for statement in body[i].body.body if i in guard else [body[i]]:
                # blank lines go (the worker is one block), comments stay with their statement
                worker.append(statement.with_changes(leading_lines=[l for l in statement.leading_lines if l.comment]))
        shared = self._globals([body[i] for i in moved], [s for i, s in enumerate(body) if i not in moved])
        if shared:
            worker.insert(0, _statement(f"global {', '.join(shared)}"))
        function = cst.FunctionDef(
            name=cst.Name(WORKER),
            params=cst.Parameters(params=[cst.Param(cst.Name("index"))]),
            body=cst.IndentedBlock(body=worker),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )
        launch = _statement(f'if __name__ == "__main__":\n    torch_xla.launch({WORKER})\n').with_changes(
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()]
        )
        kept = [s for i, s in enumerate(body) if i not in moved]
        return self.replace(
            report_at, updated, updated.with_changes(body=[*kept, function, launch]),
            f"the training code runs in `def {WORKER}(index)`, one process per device, launched by "
            f"`torch_xla.launch({WORKER})` under `if __name__ == \"__main__\":`",
            imports=[TORCH_XLA],
        )

    @staticmethod
    def _stays(statement: cst.BaseStatement, index: int) -> bool:
        """Imports, definitions, the docstring, literal constants and loggers stay at module level."""
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or _is_import_line(statement):
            return True
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)) else None
            if value is None or (isinstance(small, cst.Expr) and index > 0):
                return False
            if not (_literal(value) or (isinstance(value, cst.Call) and code_of(value.func) == "logging.getLogger")):
                return False
        return True

    def _problem(self, body: Sequence[cst.BaseStatement], guard: list[int]) -> str | None:
        for i in guard:
            statement = body[i]
            if statement.orelse is not None:
                return "the `__main__` block has an `else`: move its code into a `main()` to run it in `torch_xla.launch`"
            for node in subtree(statement.body):
                ends = isinstance(node, cst.Raise) and node.exc is not None and "SystemExit" in code_of(node.exc)
                ends = ends or isinstance(node, cst.Call) and (self.qualname(node.func) or code_of(node.func)) in EXITS
                if ends:
                    return ("the `__main__` block ends the process with a status; under `torch_xla.launch` "
                               "the workers' return values are lost: launch `def _mp_fn(index)` and exit after it")
        return None

    @staticmethod
    def _globals(moved: Sequence[cst.CSTNode], kept: Sequence[cst.CSTNode]) -> list[str]:
        """Names the moved code binds at module level that the functions staying there read."""
        bound = set()
        for statement in moved:
            if isinstance(statement, cst.If) and _is_main_guard(statement):
                statements = statement.body.body
            else:
                statements = [statement]
            for s in statements:
                for node in subtree(s):
                    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                        bound.add(node.name.value)
                    targets = (
                        [t.target for t in node.targets] if isinstance(node, cst.Assign)
                        else [node.target] if isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)) else []
                    )
                    for target in targets:
                        for name in subtree(target):
                            if isinstance(name, cst.Name) and (name is target or isinstance(target, (cst.Tuple, cst.List))):
                                bound.add(name.value)
        read = set()
        for definition in kept:
            if isinstance(definition, (cst.FunctionDef, cst.ClassDef)):
                own = {p.name.value for p in subtree(definition) if isinstance(p, cst.Param)}
                read |= {n.value for n in subtree(definition.body) if isinstance(n, cst.Name)} - own
        return sorted(bound & read)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _literal(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _literal(e.key) and _literal(e.value) for e in node.elements)
    return False


# -- SPMD ------------------------------------------------------------------------------


class SpmdMesh(TargetRule):
    """The script runs as one SPMD program: ``xr.use_spmd()`` and a data mesh over every device.

    SPMD user guide (``SPMD_DOC``): ``xr.use_spmd()`` must run before any tensor is put
    on the device, so it goes first in the ``__main__`` block (or after the imports of a
    flat script), followed by ``xs.set_global_mesh(xs.get_1d_mesh("data"))``: one mesh
    axis, ``data``, over all ``xr.global_runtime_device_count()`` devices. Parameters
    nobody annotates are replicated, so the model needs nothing; the global batch stays
    the DataLoader's batch size, split across the devices by XLA671.
    """

    CODE = "XLA670"
    NAME = "spmd-mesh"
    SUMMARY = "xr.use_spmd() and a global device mesh with a 'data' axis at the start of the script"
    FIX = SAFE
    TARGETS = ("spmd",)
    TRIGGERS = (r"__main__|\.backward\(",)
    BEFORE = "if __name__ == \"__main__\":\n    main()\n"
    AFTER = "if __name__ == \"__main__\":\n    xr.use_spmd()\n    xs.set_global_mesh(xs.get_1d_mesh(\"data\"))\n    main()\n"
    SETUP = ("xr.use_spmd()", 'xs.set_global_mesh(xs.get_1d_mesh("data"))')

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.skip:
            return updated
        setup = [_statement(code) for code in self.SETUP]
        body = list(updated.body)
        guards = [i for i, s in enumerate(original.body) if _is_main_guard(s)]
        if guards:
            where = guards[0]
            block = body[where].body
            body[where] = body[where].with_changes(body=block.with_changes(body=[*setup, *block.body]))
        elif any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward"
                 for s in original.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) for n in subtree(s)):
            where = 1 + max((i for i, s in enumerate(original.body) if _is_import_line(s)), default=-1)
            setup[0] = setup[0].with_changes(leading_lines=[cst.EmptyLine()])
            body[where:where] = setup
            where = min(where, len(original.body) - 1)
        else:
            return updated  # a library module: the script that imports it sets SPMD up
        return self.replace(
            original.body[where], updated, updated.with_changes(body=body),
            "SPMD: `xr.use_spmd()` and a global mesh over every device (`xs.get_1d_mesh(\"data\")`); "
            "one process drives all devices, the model is replicated",
            imports=[XR, XS],
        )


class SpmdBatchSharding(TargetRule):
    """Each batch is sharded on its batch dimension over the mesh's ``data`` axis.

    SPMD user guide, data parallelism: ``xs.mark_sharding(t, mesh, ("data", None, ...))``
    splits a tensor's first dimension across the devices; XLA's partitioner then runs
    the step data-parallel, with the gradients reduced where the replicated parameters
    meet the sharded batch. The loop XLA302 made iterate ``pl.MpDeviceLoader`` gets one
    ``xs.mark_sharding`` a batch tensor at the top of its body, with a partition spec
    built from the tensor's rank (``("data",) + (None,) * (x.dim() - 1)``), so images,
    tokens and labels all work. A training loop whose batches arrive otherwise (not as
    names of tensors from an MpDeviceLoader) gets a finding: it runs replicated, correct
    but without data parallelism.
    """

    CODE = "XLA671"
    NAME = "spmd-batch-sharding"
    SUMMARY = "the batches of an MpDeviceLoader loop are sharded on their batch dimension (xs.mark_sharding)"
    FIX = SAFE
    TARGETS = ("spmd",)
    TRIGGERS = (r"\.to\(|\.cuda\(|MpDeviceLoader",)
    BEFORE = "for x, y in pl.MpDeviceLoader(loader, device):\n    loss = model(x, y)\n"
    AFTER = (
        "for x, y in pl.MpDeviceLoader(loader, device):\n"
        "    xs.mark_sharding(x, xs.get_global_mesh(), (\"data\",) + (None,) * (x.dim() - 1))\n"
        "    xs.mark_sharding(y, xs.get_global_mesh(), (\"data\",) + (None,) * (y.dim() - 1))\n"
        "    loss = model(x, y)\n"
    )

    def skips(self, module: cst.Module) -> bool:
        return _distributed(self, module) and "use_spmd()" not in self.ctx.source

    def leave_For(self, original: cst.For, updated: cst.For):
        if self.skip or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        element = self._device_batch(updated.iter, updated.target)
        if element is None:
            if _trains(original.body):
                self.note(original, "SPMD: this training loop's batches are not sharded (they do not come from "
                          "`pl.MpDeviceLoader` as tensors): it runs replicated; shard them with "
                          f"`xs.mark_sharding(x, xs.get_global_mesh(), (\"data\", None, ...))` ({SPMD_DOC})")
            return updated
        names = [element] if isinstance(element, cst.Name) else [e.value for e in element.elements]
        if not all(isinstance(n, cst.Name) for n in names):
            return updated
        shards = [
            _statement(f'xs.mark_sharding({n.value}, xs.get_global_mesh(), ("data",) + (None,) * ({n.value}.dim() - 1))')
            for n in names
        ]
        if all(s.deep_equals(b) for s, b in zip(shards, updated.body.body)):
            return updated  # migrated already
        if isinstance(element, cst.Name):
            self.note(original, f"SPMD: `{element.value}` is taken for one tensor; if the loader yields tuples or "
                      "dicts, shard each tensor in it instead")
        replacement = updated.with_changes(body=updated.body.with_changes(body=[*shards, *updated.body.body]))
        return self.replace(
            original, updated, replacement,
            f"SPMD: {', '.join(f'`{n.value}`' for n in names)} sharded on the batch dimension over the mesh's "
            "`data` axis (`xs.mark_sharding`)",
            imports=[XS],
        )

    def _device_batch(self, iterable: cst.BaseExpression, target: cst.BaseExpression):
        """The target part that binds an MpDeviceLoader's batch (inside enumerate / tqdm), else None."""
        while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args:
            if iterable.func.value == "enumerate":
                if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                    return None
                target = target.elements[1].value
            elif iterable.func.value != "tqdm":
                break
            iterable = iterable.args[0].value
        if not isinstance(iterable, cst.Call):
            return None
        loader = self.qualname(iterable.func) or code_of(iterable.func)
        if loader not in ("torch_xla.distributed.parallel_loader.MpDeviceLoader", "pl.MpDeviceLoader"):
            return None
        if isinstance(target, cst.Name) or (isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) for e in target.elements)):
            return target
        return None


class SpmdWithMultiprocessing(Rule):
    """SPMD cannot be mixed with multi-processing: a launcher or DDP in the script is flagged.

    PyTorch/XLA README and overview: "multi-processing is not compatible with SPMD". One
    SPMD process drives every device, so ``mp.spawn`` / ``torch_xla.launch``, process
    groups and ``DistributedDataParallel`` have to go, not be translated: the rule
    reports them and changes nothing (``--target multiprocess`` keeps that form).
    """

    CODE = "XLA672"
    NAME = "spmd-with-multiprocessing"
    SUMMARY = "under --target spmd, process launchers, process groups and DDP are flagged (SPMD is one process)"
    FIX = None
    SEVERITY = "error"
    TARGETS = ("spmd",)
    TRIGGERS = (r"spawn|start_processes|launch|init_process_group|DistributedDataParallel",)
    WHOLE_MODULE = True  # as the other target rules: one run of them sees the whole script
    BEFORE = "import torch.multiprocessing as mp\nmp.spawn(train, nprocs=8)\n"
    AFTER = (
        "import torch.multiprocessing as mp\n"
        "# TODO(xla-migrate): XLA672 `torch.multiprocessing.spawn` under `--target spmd`: SPMD runs one process "
        "that drives every device and cannot be mixed with multi-processing; remove the launcher / process group "
        f"/ DDP wrapper and shard the batch instead ({SPMD_DOC}), or migrate with `--target multiprocess`\n"
        "mp.spawn(train, nprocs=8)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in LAUNCHERS:
            self.flag(original, (
                f"`{name}` under `--target spmd`: SPMD runs one process that drives every device and cannot be "
                "mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the "
                f"batch instead ({SPMD_DOC}), or migrate with `--target multiprocess`"
            ))
        return updated
