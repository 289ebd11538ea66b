"""A GPU script that trains in a worker process started by torch.multiprocessing.spawn."""

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def train(index):
    device = torch.device("cuda", index)
    torch.manual_seed(0)
    model = nn.Linear(8, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(32, 8)
    targets = inputs.sum(dim=1, keepdim=True)
    for step in range(20):
        x, y = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    mp.spawn(train, nprocs=1)
