"""A Trainer class that steps inside a method: the sync goes into the method. [XLA201]"""

import torch_xla


class Trainer:
    def __init__(self, model, optimizer, loss_fn):
        self.model = model
        self.optimizer = optimizer
        self.loss_fn = loss_fn

    def train_step(self, batch):
        inputs, labels = batch
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.model(inputs), labels)
        loss.backward()
        self.optimizer.step()
        torch_xla.sync()
        return loss

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for batch in loader:
                self.train_step(batch)
