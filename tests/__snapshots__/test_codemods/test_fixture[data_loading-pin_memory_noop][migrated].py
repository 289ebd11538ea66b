"""Loaders that pin nothing: no pin_memory, pin_memory=False, XLA's MpDeviceLoader."""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

dataset = TensorDataset(torch.randn(32, 4))
loader = DataLoader(dataset, batch_size=8, shuffle=True, drop_last=True, num_workers=2)
cpu_loader = DataLoader(dataset, batch_size=8, pin_memory=False)
kwargs = {"num_workers": 0, "pin_memory": False}
device_loader = pl.MpDeviceLoader(loader, torch_xla.device())
# pin_memory=True was dropped: nothing to pin on XLA
