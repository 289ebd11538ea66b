"""Tensors pinned by hand before a non_blocking copy to the GPU. [XLA101, XLA301]"""

import torch
import torch_xla

device = torch_xla.device()
batch = torch.randn(64, 3, 32, 32)
labels = torch.randint(0, 10, (64,))
labels = labels.to(device, non_blocking=True)
buffer = torch.empty(1024)


def collate(samples):
    x = torch.stack(samples)
    return x


class SimpleCustomBatch:
    """The custom batch type of the DataLoader docs' "memory pinning" section."""

    def __init__(self, data):
        transposed = list(zip(*data))
        self.inp = torch.stack(transposed[0], 0)
        self.tgt = torch.stack(transposed[1], 0)

    def pin_memory(self):
        return self


def prefetch(batches):
    for batch in batches:
        yield batch.to(device, non_blocking=True)
