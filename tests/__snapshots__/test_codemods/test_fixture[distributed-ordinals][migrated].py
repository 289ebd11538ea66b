"""Ranks and world sizes read from the process group and from device counts. [XLA105, XLA604]"""

import torch.distributed as dist
import torch_xla
import torch_xla.runtime as xr


def shard(items):
    rank = xr.global_ordinal()
    world_size = xr.world_size()
    return items[rank::world_size]


def log(message):
    if xr.global_ordinal() == 0:
        print(message, xr.world_size())


def subgroup_rank(group):
    return dist.get_rank(group)


def counted():
    world_size = xr.world_size()
    n_gpus = torch_xla.device_count()
    return world_size, n_gpus
