"""A GPU script that updates its parameters by hand (no optimizer), as the word-level
language model example does, for ever: only --steps stops it."""

import torch
import torch.nn as nn

device = torch.device("cuda")
torch.manual_seed(0)
model = nn.Linear(4, 1).to(device)
x = torch.randn(32, 4, device=device)
y = x.sum(dim=1, keepdim=True)
lr = 0.1
while True:
    model.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
