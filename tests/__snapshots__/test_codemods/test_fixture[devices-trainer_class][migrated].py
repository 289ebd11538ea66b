"""A Trainer class that keeps the device on self and moves its model with .cuda(). [XLA101, XLA103, XLA109, XLA201]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Trainer:
    """Owns the model, the optimizer and the device."""

    def __init__(self, model: nn.Module, lr: float = 1e-3):
        self.device = torch_xla.device()
        self.model = model
        self.model.to(torch_xla.device())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.loss_fn = nn.MSELoss().to(torch_xla.device())

    def step(self, inputs, targets):
        inputs = inputs.to(self.device, non_blocking=True)
        targets = targets.to(self.device, non_blocking=True)
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(inputs), targets)
        loss.backward()
        self.optimizer.step()
        torch_xla.sync()
        return loss.detach()


class Evaluator:
    device: torch.device = torch_xla.device()

    def __init__(self, model):
        self.model = model.to(self.device).eval()
