"""A training step that gets its scaler from the caller: matched by shape, an unsafe fix. [XLA201, XLA403]"""

import torch_xla


def train(model, loader, optimizer, scaler, loss_fn, clip):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip(model.parameters())
        scaler.step(optimizer)
        scaler.update()
        torch_xla.sync()


class Engine:
    def step(self, loss):
        self.loss_scaler.scale(loss).backward()
        self.loss_scaler.step(self.optimizer)
        self.loss_scaler.update()
        torch_xla.sync()
