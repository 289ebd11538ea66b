"""A tiny GPU training script for fast harness tests: dropout, momentum, .cuda(), a device flag."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

if "--crash" in sys.argv:
    raise RuntimeError("boom: the script failed on purpose")
if "--hang" in sys.argv:
    import time

    time.sleep(600)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
inputs = torch.randn(64, 8)
targets = inputs.sum(dim=1, keepdim=True)

for step in range(30):
    start = (step * 16) % 64
    x = inputs[start : start + 16].to(device)
    y = targets[start : start + 16].to(device)
    noise = torch.randn(16, 8, device=device) * 0.01
    optimizer.zero_grad()
    loss = F.mse_loss(model(x + noise), y)
    if "--nan" in sys.argv and step == 2:
        loss = loss * float("nan")
    if "--no-backward" not in sys.argv:
        loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
    if "--hang-late" in sys.argv and step == 2:
        import time

        time.sleep(600)  # a hang after some steps: the timeout still reports them
    if "--exit-early" in sys.argv and step == 2:
        sys.exit(3)  # a failure that is no exception, after some steps
