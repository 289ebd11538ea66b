"""Shards, barriers and metric reductions of a DDP training loop. [XLA606, XLA607]"""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def loaders(dataset, rank, world_size, args):
    sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    positional = DistributedSampler(dataset, xr.world_size(), xr.global_ordinal())
    return DataLoader(dataset, sampler=sampler), positional


def end_of_epoch(rank, loss_sum, correct):
    dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
    dist.all_reduce(correct)
    xm.all_reduce(xm.REDUCE_SUM, [loss_sum], scale=1.0 / xr.world_size())
    if rank == 0:
        save_checkpoint()
    xm.rendezvous("barrier")
    xm.rendezvous("barrier")
    # TODO(xla-migrate): XLA607 a barrier of a subgroup: wait with `xm.rendezvous(tag, replicas=[...])`; see https://docs.pytorch.org/xla/master/perf/ddp.html
    dist.barrier(group=subgroup)
    load_checkpoint()
    dist.destroy_process_group()
