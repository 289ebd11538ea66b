"""Loops whose shapes stay the same: lists concatenated once, a sliding window, fresh tensors,
fixed-length slices, and data-side code that runs on the host."""

import torch
import torch_xla
from torch.utils.data import Dataset


def evaluate(model, loader):
    outs = []
    for x, _ in loader:
        outs.append(model(x))
    return torch.cat(outs)


def rollout(model, window, steps):
    for _ in range(steps):
        nxt = model(window)[:, -1:]
        window = torch.cat((window, nxt), dim=1)
        window = window[:, 1:]  # the same length at every iteration
    return window


def train(model, loader, optimizer, extra, block_size=16):
    for step, (x, y) in enumerate(loader):
        x = torch.cat((x, extra), dim=1)
        for t in range(block_size):
            token = x[:, t]
            chunk = x[:, t:t + 4]
            loss = model(token, chunk).sum()
        loss.backward()
        optimizer.step()
        torch_xla.sync()


class Windows(Dataset):
    def __init__(self, data, block_size):
        self.data, self.block_size = data, block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, i):
        chunk = torch.empty(0, dtype=torch.long)
        for j in range(self.block_size + 1):
            chunk = torch.cat((chunk, self.data[i + j:i + j + 1]))
        return chunk[:-1], chunk[1:]


def collate(batch):
    xs = torch.empty(0)
    for i, (x, _) in enumerate(batch):
        xs = torch.cat((xs, x[:i + 1]))
    return xs
