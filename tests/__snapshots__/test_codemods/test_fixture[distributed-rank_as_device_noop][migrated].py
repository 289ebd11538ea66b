"""Ranks that do not pick a device; moves to the XLA device."""

import torch
import torch_xla


def train(rank, model, batch):
    model = model.to(torch_xla.device())
    batch = batch.to(torch.float32)
    shard = batch[rank]
    weights = torch.full((2,), rank)
    return model(shard), weights
