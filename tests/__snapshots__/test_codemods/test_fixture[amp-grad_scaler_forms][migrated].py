"""GradScalers made in the file, in the torch.amp spelling and on a trainer object. [XLA201, XLA401, XLA402]"""

import torch
import torch_xla


class Trainer:
    def __init__(self, model, optimizer, config):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = config.amp
        self.accumulation = config.accumulation

    def train_step(self, step, batch, target):
        with torch.autocast("xla", dtype=torch.bfloat16, enabled=self.use_amp):
            loss = self.model(batch, target) / self.accumulation
        loss.backward()
        if (step + 1) % self.accumulation == 0:
            self.optimizer.step()
            torch_xla.sync()
            self.optimizer.zero_grad()
        return loss.detach()

    def log(self, step, loss):
        print(f"{step}: loss {loss.item():.3f}, loss scale {1.0}")


def fine_tune(model, loader, lr=1e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    for batch, target in loader:
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(batch, target)
        (loss * 0.5 + 1e-3 * sum(p.abs().sum() for p in model.parameters())).backward()
        optimizer.step(closure=None)
        torch_xla.sync()
    second = torch.optim.SGD(model.parameters(), lr=lr)
    model(batch, target).backward()
    second.step()
