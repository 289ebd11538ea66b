"""XLA624: the batch a sharded script's training loop moves to the device is sharded on its
first dimension over the mesh."""

from __future__ import annotations

import re

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, ShardingRule
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import code_of, subtree

# A move to the device: ``.cuda()``, ``.to("cuda")``, ``.to(device)``, ``.to(rank)`` (and their
# XLA forms, which the device rules wrote first); ``.to(torch.bfloat16)`` is not one
DEVICE_ARG = re.compile(r"cuda|xla|device|rank", re.IGNORECASE)
# A module moved in the loop is no batch: a name the loop calls, or one named like a module
MODULE_NAME = re.compile(r"model|net|module|layer|encoder|decoder", re.IGNORECASE)
MARK = "xs.mark_sharding({0}, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * ({0}.dim() - 1))"


class ShardedBatch(ShardingRule):
    """In a script that shards its model, each batch tensor its training loop moves to the device
    (``x = batch.to(device)``, ``x, y = x.cuda(), y.cuda()``, or the tensors a loop over XLA302's
    ``pl.MpDeviceLoader`` binds) is sharded on its first dimension over every axis of the global
    mesh.

    FSDP is data parallel: each GPU computes the forward and backward of its own rows. On SPMD
    one program sees the global batch (the rank is 0 and the world size 1, so a script that
    slices its batch by rank keeps all of it); SPMD user guide: ``xs.mark_sharding(x, mesh,
    (mesh.axis_names,) + (None,) * (x.dim() - 1))`` splits its first dimension over all the
    mesh's devices (the ``fsdp`` axis, or both axes of a hybrid ``(replicate, shard)`` mesh), and
    XLA's partitioner reduces the gradients where the rows meet the sharded parameters. Without
    it the step is still right but every device computes every row. A move is recognised by its
    shape (``.cuda()``, or ``.to(...)`` naming a device, CUDA, XLA or a rank), at the top of a
    loop body that runs a training step, and is taken for a module's, not a batch's, when the
    loop calls the name or it is named like a module (``model``, ``net``, ``layer``, ...); the
    marks come right after it. The batch's first
    dimension is taken to be the batch: a tensor with another layout needs its own spec.
    """

    CODE = "XLA624"
    NAME = "sharded-batch"
    SUMMARY = "in a sharded script, the batch its training loop moves to the device is sharded on dim 0 over the mesh"
    FIX = "safe"
    REQUIRES = (
        *ShardingRule.REQUIRES,
        r"\.to\(|\.cuda\(",
    )
    BEFORE = (
        "from torch.distributed import init_process_group\nfrom torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\n'
        "for x, y in loader:\n"
        '    x, y = x.to("cuda"), y.to("cuda")\n'
        "    model(x, y).backward()\n"
    )
    AFTER = (
        "from torch.distributed import init_process_group\nfrom torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\n'
        "for x, y in loader:\n"
        '    x, y = x.to("cuda"), y.to("cuda")\n'
        "    xs.mark_sharding(x, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (x.dim() - 1))\n"
        "    xs.mark_sharding(y, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (y.dim() - 1))\n"
        "    model(x, y).backward()\n"
    )

    def leave_For(self, original: cst.For, updated: cst.For):
        return self._shard_moves(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While):
        return self._shard_moves(original, updated)

    def _shard_moves(self, original, updated):
        if not self.shards or not isinstance(updated.body, cst.IndentedBlock) or not calls_training_step(original.body):
            return updated
        body, names = [], []
        loaded = _device_loader_names(updated) if isinstance(updated, cst.For) else []
        if loaded:
            marks = [cst.parse_statement(MARK.format(n)) for n in loaded]
            present = list(updated.body.body[: len(marks)])
            if len(present) == len(marks) and all(m.deep_equals(p) for m, p in zip(marks, present)):
                loaded = []  # migrated already
            else:
                body.extend(marks)
                names.extend(loaded)
        called = {
            n.func.value for n in subtree(original.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
        }
        statements = list(updated.body.body)
        for i, statement in enumerate(statements):
            body.append(statement)
            moved = _moved_names(statement)
            if any(n in called or MODULE_NAME.search(n) for n in moved):
                continue
            if not moved:
                continue
            marks = [cst.parse_statement(MARK.format(n)) for n in moved]
            following = statements[i + 1 : i + 1 + len(marks)]
            if len(following) == len(marks) and all(m.deep_equals(f) for m, f in zip(marks, following)):
                continue  # migrated already
            body.extend(marks)
            names.extend(moved)
        if not names:
            return updated
        return self.replace(
            original,
            updated,
            updated.with_changes(body=updated.body.with_changes(body=body)),
            f"the batch ({', '.join(f'`{n}`' for n in names)}) sharded on its first dimension over the mesh "
            f"(`xs.mark_sharding`): each device computes its rows, as each GPU did ({SPMD_GUIDE})",
            imports=[XS],
        )


def _device_loader_names(loop: cst.For) -> list[str]:
    """The names a loop over ``pl.MpDeviceLoader(...)`` (XLA302's, maybe inside ``enumerate`` or
    ``tqdm``) binds to its batch's tensors: they arrive on the device already."""
    iterable, target = loop.iter, loop.target
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args:
        if iterable.func.value == "enumerate":
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return []
            target = target.elements[1].value
        elif iterable.func.value != "tqdm":
            break
        iterable = iterable.args[0].value
    if not isinstance(iterable, cst.Call) or code_of(iterable.func) != "pl.MpDeviceLoader":
        return []
    if isinstance(target, cst.Name):
        return [] if MODULE_NAME.search(target.value) else [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return []


def _moved_names(statement: cst.CSTNode) -> list[str]:
    """The names ``name = t.to(device)`` or ``a, b = x.cuda(), y.cuda()`` binds to moved tensors."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return []
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return []
    target, value = assign.targets[0].target, assign.value
    if isinstance(target, cst.Name):
        return [target.value] if _is_move(value) else []
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        pairs = list(zip(target.elements, value.elements))
        if len(pairs) == len(target.elements) == len(value.elements) and all(
            isinstance(t.value, cst.Name) and _is_move(v.value) for t, v in pairs
        ):
            return [t.value.value for t, _ in pairs]
    return []


def _is_move(value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return False
    if value.func.attr.value == "cuda":
        return True
    return value.func.attr.value == "to" and bool(value.args) and bool(DEVICE_ARG.search(code_of(value.args[0].value)))
