"""tiny_mlp.py migrated to TorchTPU by hand (--runtime torch-tpu): the "tpu" device, .tpu(), eager."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

if "--crash" in sys.argv:
    raise RuntimeError("boom: the script failed on purpose")

device = torch.device("tpu" if torch.tpu.is_available() else "cpu")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1)).tpu()
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
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
