"""spawn_mlp.py migrated by hand to torch_xla.launch: the worker is instrumented too."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla


def train(index):
    device = torch_xla.device()
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
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(train)
