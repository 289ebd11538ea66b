# fixture: unsafe-fixes
"""A training step that gets its scaler from the caller: matched by shape, an unsafe fix. [XLA201, XLA403]"""

import torch_xla


def train(model, loader, optimizer, scaler, loss_fn, clip):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        clip(model.parameters())
        optimizer.step()
        torch_xla.sync()


class Engine:
    def step(self, loss):
        loss.backward()
        self.optimizer.step()
        torch_xla.sync()
