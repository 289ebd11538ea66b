"""A DDP trainer that names its own rendezvous port, as the DDP tutorials do (MASTER_PORT
12355): both runs of verify, side by side, must not meet at it (tests/test_verify_tpu.py)."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.manual_seed(0)
    device = torch.device("cuda:0")
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device), device_ids=[0])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    for step in range(6):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        print(step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
