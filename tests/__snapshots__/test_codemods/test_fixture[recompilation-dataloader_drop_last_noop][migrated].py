"""Loaders that need no drop_last: already set, evaluation loaders, batch samplers, kwargs."""

import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

dataset = TensorDataset(torch.randn(100, 4))
train_loader = DataLoader(dataset, batch_size=16, shuffle=True, drop_last=True)
test_loader = DataLoader(dataset, batch_size=16)
eval_loader = DataLoader(dataset, batch_size=16, shuffle=False)
sampled = DataLoader(dataset, batch_sampler=BatchSampler(RandomSampler(dataset), 16, drop_last=True))
train_kwargs = {"batch_size": 16, "shuffle": True, "drop_last": True}
from_kwargs = DataLoader(dataset, **train_kwargs)
configured = DataLoader(dataset, batch_size=16, shuffle=True, drop_last=args_drop_last)
unbatched = DataLoader(dataset, batch_size=None, shuffle=True)
plain = DataLoader(dataset, batch_size=16)


def validation_loader(data):
    return DataLoader(data, batch_size=64, shuffle=True)
