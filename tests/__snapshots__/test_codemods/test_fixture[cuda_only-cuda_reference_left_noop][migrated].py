"""An already-migrated XLA script: comments and messages may say CUDA, the code must not."""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true", help="ignored; kept for old launch scripts")
args = parser.parse_args()

# Migrated from the CUDA version: torch.cuda.synchronize() became torch_xla.sync().
device = torch_xla.device()
model = torch.nn.Linear(4, 4).to(device)
print("cuda" if args.cuda else "xla", "requested;", "running on", xm.xla_device_hw(device))
for _ in range(3):
    loss = model(torch.randn(2, 4, device=device)).sum()
    loss.backward()
    torch_xla.sync()
