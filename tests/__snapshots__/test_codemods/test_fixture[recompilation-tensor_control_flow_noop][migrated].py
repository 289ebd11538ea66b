"""Branches that read no tensor value, or that run outside the training step."""

import torch
import torch_xla


def train(model, loader, optimizer, log_interval=10):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if step % log_interval == 0:
            print(step, loss.item())
        if len(x) < 4:
            break


def summarize(history):
    best = torch.stack(history).min()
    if best.item() < 0.1:
        print("converged")


checkpoint = torch.load("ckpt.pt", map_location="cpu")
if checkpoint["loss"].item() > 1.0:
    print("resuming from a poor checkpoint")
