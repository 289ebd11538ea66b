"""A small GPU network with ELU activations (a graph-attention layer's activation):
torch_xla 2.9.0's backward of ELU is wrong for negative inputs on CPU PJRT."""

import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ELU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(64, 6) * 2
targets = inputs[:, :1] - inputs[:, 1:2]
for step in range(100):
    x = inputs[(step * 16) % 64 :][:16].to(device)
    y = targets[(step * 16) % 64 :][:16].to(device)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
