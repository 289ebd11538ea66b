"""Loops that need no added sync: a wrapped loader syncs itself, no model runs, already synced."""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl


def evaluate(model, loader, device):
    with torch.no_grad():
        for data, target in pl.MpDeviceLoader(loader, device):
            total = model(data).sum()
    return total


@torch.no_grad()
def collect(names):
    sizes = []
    for name in names:
        sizes.append(len(name))
    return sizes


def score(model, batches):
    with torch.no_grad():
        for x in batches:
            model(x)
            torch_xla.sync()


def train_and_peek(model, batches, optimizer):
    for x in batches:  # not under no_grad: a training loop, XLA201's business
        loss = model(x)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
