"""GradScalers used in ways the rule cannot follow: kept on the XLA device and flagged. [XLA201, XLA401, XLA402, XLA404]"""

import torch

from trainer import Trainer
import torch_xla


def main(model, loader, use_amp):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    # TODO(xla-migrate): XLA402 `scaler` is also used in a way xla-migrate does not convert (`trainer.fit(loader, scaler)`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
    scaler = torch.amp.GradScaler("xla")
    trainer = Trainer(model, optimizer)
    for epoch in range(3):
        trainer.fit(loader, scaler)  # handed to code in another module: kept


def optional(model, loader, use_amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(xla-migrate): XLA402 `amp_scaler` is also used in a way xla-migrate does not convert (`amp_scaler = torch.amp.GradScaler("cuda") if use_amp else...`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
    amp_scaler = torch.amp.GradScaler("xla") if use_amp else None
    for x, y in loader:
        loss = model(x, y)
        if amp_scaler is not None:
            amp_scaler.scale(loss).backward()
            amp_scaler.step(optimizer)
            amp_scaler.update()
            torch_xla.sync()
        else:
            loss.backward()
            optimizer.step()
            torch_xla.sync()


class AmpTrainer:
    def __init__(self, use_amp):
        # TODO(xla-migrate): XLA402 `self.scaler` is also used in a way xla-migrate does not convert (`self.scaler.is_enabled()`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
        self.scaler = torch.amp.GradScaler("xla", enabled=use_amp)

    def step(self, model, x, y, optimizer):
        # is_enabled() says whether mixed precision is on: a disabled scaler would say no
        with torch.autocast("xla", dtype=torch.bfloat16, enabled=self.scaler.is_enabled()):
            loss = model(x, y)
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()
        torch_xla.sync()
