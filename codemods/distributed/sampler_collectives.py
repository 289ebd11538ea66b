"""XLA606-XLA607: data sharding and collectives: a ``DistributedSampler`` takes its shard
from the runtime (XLA606, the migration guide's "Distributed Training"); ``dist.barrier()``
and an averaging ``all_reduce`` become their ``xm`` forms (XLA607)."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from migrate_xla.rule.api import SAFE, XM, XR, Rule, call_arg, code_of, parse_expr, words

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

    PyTorch/XLA only: under TorchTPU the script's ranks are right (its launcher and ``tpu``
    process group are a GPU script's), and the sampler keeps them.
    """

    CODE = "XLA606"
    NAME = "distributed-sampler-shards"
    SUMMARY = "DistributedSampler(num_replicas=..., rank=...) reads xr.world_size() and xr.global_ordinal()"
    FIX = SAFE
    TRIGGERS = (r"DistributedSampler",)
    RUNTIMES = ("torch-xla",)
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

    PyTorch/XLA only: TorchTPU's ``tpu`` backend is an ordinary process-group backend whose
    ``barrier`` waits (the xla backend's does not), so ``dist.barrier()`` and ``dist.all_reduce``
    stay there as the GPU script wrote them.
    """

    CODE = "XLA607"
    NAME = "xla-collectives"
    SUMMARY = "dist.barrier() becomes xm.rendezvous('barrier'); all_reduce with AVG becomes xm.all_reduce"
    FIX = SAFE
    TRIGGERS = (r"barrier\(", words("AVG"))
    RUNTIMES = ("torch-xla",)
    BEFORE = "import torch.distributed as dist\n\ndist.barrier()\ndist.all_reduce(loss, op=dist.ReduceOp.AVG)\n"
    AFTER = '\nxm.rendezvous("barrier")\nxm.all_reduce(xm.REDUCE_SUM, [loss], scale=1.0 / xr.world_size())\n'

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        name = self.qualname(call.func) if isinstance(call, cst.Call) else None
        if name in BARRIERS:
            if any(a.keyword is None or a.keyword.value not in ("device_ids", "timeout") for a in call.args):
                self.flag(
                    call, f"a barrier of a subgroup: wait with `xm.rendezvous(tag, replicas=[...])`; see {DDP_GUIDE}"
                )
                return updated
            return self.replace(
                original,
                updated,
                updated.with_changes(value=parse_expr('xm.rendezvous("barrier")')),
                f'`{code_of(call.func)}()` is a no-op under the xla backend -> `xm.rendezvous("barrier")`, which waits',
                imports=[XM],
                drop_if_unused=self.ctx.import_behind(call.func),
            )
        if name != ALL_REDUCE:
            return updated
        tensor, op = call_arg(call, 0, "tensor"), call_arg(call, 1, "op")
        if tensor is None or op is None or self.qualname(op.value) not in AVERAGE:
            return updated
        if len(call.args) > 2 or any(a.star for a in call.args):
            self.flag(call, "`ReduceOp.AVG` is not supported by the xla backend: sum and divide by `xr.world_size()`")
            return updated
        replacement = parse_expr(
            f"xm.all_reduce(xm.REDUCE_SUM, [{code_of(tensor.value)}], scale=1.0 / xr.world_size())"
        )
        return self.replace(
            original,
            updated,
            updated.with_changes(value=replacement),
            "`ReduceOp.AVG` is not supported by the xla backend -> `xm.all_reduce` summing in place, scaled by the world size",
            imports=[XM, XR],
            drop_if_unused=[*self.ctx.import_behind(call.func), *self.ctx.import_behind(op.value)],
        )
