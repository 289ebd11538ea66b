"""Samplers whose shards are the runtime's already, or the author's own numbers."""

import torch_xla.runtime as xr
from torch.utils.data import DistributedSampler

train_sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
resume_sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
default_sampler = DistributedSampler(dataset)
