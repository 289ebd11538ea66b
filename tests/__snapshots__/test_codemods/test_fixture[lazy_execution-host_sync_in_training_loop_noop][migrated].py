"""Host reads that are fine: behind a logging interval, after the loop, in evaluation."""

import torch
import torch_xla


def train(model, loader, optimizer, log_interval=10):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if step % log_interval == 0:
            print(f"step {step}: {loss.item():.4f}")
    return loss.item()


@torch.no_grad()
def evaluate(model, loader):
    scores = []
    for x, y in loader:
        scores.append(model(x, y).item())
        torch_xla.sync()
    return sum(scores) / len(scores)
