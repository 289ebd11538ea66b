"""A trainer whose batches change shape every step (sequences of a new length each step, as a
detection model's proposals do): on XLA each step compiles new graphs, and never settles."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(5000):
    length = 5 + step  # a new shape every step
    x = torch.randn(4, length, 8).cuda()
    y = torch.randn(4, 1).cuda()
    loss = ((model(x).mean(dim=1) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
