"""A GPU script whose device is a flag, off by default: run as it is, it trains on the CPU, and
so does its migration (the flag now picks the XLA device)."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", action="store_true")
args = parser.parse_args()
device = torch.device("cuda" if args.gpu else "cpu")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(64, 8)
for step in range(12):
    x = inputs[(step * 16) % 64 :][:16].to(device)
    loss = F.mse_loss(model(x), x.sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
