"""XLA651 (``--target multiprocess``): the training DataLoader reads its shard through a
``DistributedSampler`` (the migration guide's "Distributed Training")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.training_loops import DATALOADERS, EVAL_WORDS, name_words
from codemods.targets.common import TargetRule, distributes_itself, parse_statement
from migrate_xla.rule.api import (
    SAFE,
    XR,
    Import,
    append_keyword,
    call_arg,
    code_of,
    drop_items,
    parse_expr,
    string_value,
    subtree,
)

DISTRIBUTED_SAMPLER = Import("torch.utils.data.distributed", "DistributedSampler")


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

    PyTorch/XLA only: the shard comes from ``torch_xla.runtime``, and ``--runtime torch-tpu``
    refuses ``--target multiprocess``.
    """

    CODE = "XLA651"
    NAME = "distributed-sampler"
    SUMMARY = "the training DataLoader gets a DistributedSampler over xr.world_size() replicas, with set_epoch"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    RUNTIMES = ("torch-xla",)
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
        return distributes_itself(self, module) or "DistributedSampler(" in self.ctx.source

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
        words = name_words(code_of(target)) | name_words(code_of(call.args[0].value) if call.args else "")
        shuffle = call_arg(call, 2, "shuffle")
        trains = any(w.startswith("train") for w in words) or (shuffle is not None and code_of(shuffle.value) == "True")
        if not trains or words & EVAL_WORDS:
            return None
        return code_of(target), call

    def _flag_at(self, original_body, statement: cst.SimpleStatementLine, message: str) -> None:
        """A TODO comment above the loader's own line (the engine would put it above the block's owner)."""
        target = code_of(statement.body[0].targets[0].target)
        first = next(
            (
                s
                for s in original_body
                if isinstance(s, cst.SimpleStatementLine)
                and isinstance(s.body[0], cst.Assign)
                and code_of(s.body[0].targets[0].target) == target
            ),
            statement,
        )
        self.ctx.statements.append(first)
        self.flag(first, message)
        self.ctx.statements.pop()
        self.flagged[id(statement)] = first

    def _shard(self, body: list, index: int, loader: str, call: cst.Call) -> list | None:
        statement = body[index]
        if call_arg(call, 3, "sampler") is not None or call_arg(call, 4, "batch_sampler") is not None:
            self._flag_at(
                self.original_body,
                statement,
                f"`{loader}` has a sampler of its own: make it a shard of `xr.world_size()` "
                "(a DistributedSampler's job) so each process reads different data",
            )
            return None
        dataset = call_arg(call, 0, "dataset")
        shuffle = call_arg(call, 2, "shuffle")
        if dataset is None or dataset.star or (shuffle is not None and shuffle.keyword is None):
            self._flag_at(
                self.original_body,
                statement,
                f"`{loader}`: give the DataLoader its dataset and `shuffle` by keyword or "
                "first argument, then a `DistributedSampler(dataset, num_replicas=xr.world_size(), "
                "rank=xr.global_ordinal())`",
            )
            return None
        found = self._shuffle_in_kwargs(body, index, call)
        if found is None:
            self._flag_at(
                self.original_body,
                statement,
                f"`{loader}`: its `**kwargs` may set `shuffle`, which a DistributedSampler "
                "takes over; write them out, then give it `sampler=DistributedSampler(...)`",
            )
            return None
        shuffle_value, kwargs_at, kwargs_dict = found
        if shuffle is not None:
            shuffle_value = shuffle.value
        if not self.fixes(call):
            self.replace(
                call,
                None,
                None,
                f"`{loader}` reads its shard of the data: `sampler=DistributedSampler(...)`",
                imports=[DISTRIBUTED_SAMPLER, XR],
            )
            return None
        body = list(body)
        if kwargs_at is not None:  # "shuffle" goes from the kwargs dict it was written in
            line = body[kwargs_at]
            assign = line.body[0]
            elements = drop_items(kwargs_dict.elements, lambda e: string_value(e.key) == "shuffle")
            body[kwargs_at] = line.with_changes(
                body=[assign.with_changes(value=kwargs_dict.with_changes(elements=elements))]
            )
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
        new_call = call.with_changes(
            args=drop_items(args, lambda a: a.keyword is not None and a.keyword.value == "shuffle")
        )
        new_call = append_keyword(new_call, "sampler", sampler)
        line = body[index]
        assign = line.body[0]
        if hoisted:
            hoisted[0] = hoisted[0].with_changes(leading_lines=line.leading_lines)
            line = line.with_changes(leading_lines=[])
        body[index] = line.with_changes(body=[assign.with_changes(value=new_call)])
        epoch = self._set_epoch(body, index, loader)
        self.replace(
            call,
            None,
            None,
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
            i
            for i, s in enumerate(body[:index])
            if isinstance(s, cst.SimpleStatementLine)
            and len(s.body) == 1
            and isinstance(s.body[0], cst.Assign)
            and code_of(s.body[0].targets[0].target) == name
        ]
        if len(literal) != 1 or not isinstance(body[literal[0]].body[0].value, cst.Dict):
            return None
        kwargs = body[literal[0]].body[0].value
        dicts = {id(kwargs)}
        uses = 0
        for statement in body:
            for node in subtree(statement):
                if (
                    isinstance(node, cst.Call)
                    and isinstance(node.func, cst.Attribute)
                    and code_of(node.func.value) == name
                ):
                    if node.func.attr.value != "update" or len(node.args) != 1:
                        return None
                    added = self._dict_literal(body, node.args[0].value)
                    if added is None or any(
                        string_value(e.key) == "shuffle" for e in added.elements if isinstance(e, cst.DictElement)
                    ):
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
            n.value
            for s in body
            for n in subtree(s)
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and code_of(n.targets[0].target) == value.value
        ]
        return bound[0] if len(bound) == 1 and isinstance(bound[0], cst.Dict) else None

    @staticmethod
    def _set_epoch(body: list, index: int, loader: str) -> str | None:
        """Calls ``loader.sampler.set_epoch(epoch)`` first in the epoch loop that uses ``loader``."""
        for at in range(index + 1, len(body)):
            loop = body[at]
            if not isinstance(loop, cst.For) or not any(
                code_of(n) == loader for n in subtree(loop.body) if isinstance(n, (cst.Name, cst.Attribute))
            ):
                continue
            if not isinstance(loop.target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock):
                return None
            epoch = loop.target.value
            call = parse_statement(f"{loader}.sampler.set_epoch({epoch})")
            body[at] = loop.with_changes(body=loop.body.with_changes(body=[call, *loop.body.body]))
            return epoch
        return None
