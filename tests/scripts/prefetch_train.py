"""A GPU trainer whose data loader (prefetch_lib, as a library) uses CUDA streams."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from prefetch_lib import PrefetchLoader

torch.manual_seed(0)
inputs = torch.randn(96, 4)
targets = (inputs.sum(dim=1) > 0).long()
loader = PrefetchLoader(DataLoader(TensorDataset(inputs, targets), batch_size=16, pin_memory=True))
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for epoch in range(10):
    start.record()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    end.record()
    torch.cuda.synchronize()
    print(f"epoch {epoch} loss {loss.item():.4f} in {start.elapsed_time(end):.1f} ms")
