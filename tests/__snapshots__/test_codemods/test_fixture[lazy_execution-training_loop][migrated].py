"""The guide's basic loop: one sync after optimizer.step(), before logging. [XLA201]"""

import torch
import torch.nn.functional as F
import torch_xla


def train(model, loader, optimizer, device, log_interval=10):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if batch_idx % log_interval == 0:
            print(batch_idx, loss.item())
