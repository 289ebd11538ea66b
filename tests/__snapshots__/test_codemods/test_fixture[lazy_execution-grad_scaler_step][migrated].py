"""scaler.step(optimizer) then scaler.update(): the step ends after the update. [XLA201, XLA403]"""

import torch_xla


def train(model, loader, optimizer, scaler, loss_fn):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        torch_xla.sync()
