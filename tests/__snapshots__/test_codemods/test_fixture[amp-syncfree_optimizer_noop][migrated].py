"""No GradScaler stays: the optimizers are left as they are."""

import torch
import torch_xla


def train(model, loader, lr):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    for x, y in loader:
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
