"""GradScalers made in the file, in the torch.amp spelling and on a trainer object."""

import torch
import torch_xla


class Trainer:
    def __init__(self, model, optimizer, config):
        self.model = model
        self.optimizer = optimizer
        # TODO(xla-migrate): XLA402 `self.scaler` is also used in a way xla-migrate does not convert (`self.scaler.is_enabled`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
        self.scaler = torch.amp.GradScaler("xla", enabled=config.amp)
        self.accumulation = config.accumulation

    def train_step(self, step, batch, target):
        with torch.autocast("xla", dtype=torch.bfloat16, enabled=self.scaler.is_enabled()):
            loss = self.model(batch, target) / self.accumulation
        self.scaler.scale(loss).backward()
        if (step + 1) % self.accumulation == 0:
            self.scaler.step(self.optimizer)
            self.scaler.update()
            torch_xla.sync()
            self.optimizer.zero_grad()
        return loss.detach()

    def log(self, step, loss):
        print(f"{step}: loss {loss.item():.3f}, loss scale {self.scaler.get_scale()}")


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
