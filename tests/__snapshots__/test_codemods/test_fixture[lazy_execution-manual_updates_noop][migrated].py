"""Loops that keep their code: the iteration already syncs (in the loop, around the `if`, after
the helper's call, via a StepTrace), or nothing updates parameters from their gradients."""

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.profiler as xp


def train_word_lm(model, criterion, batches, lr, clip):
    for data, targets in batches:
        model.zero_grad()
        output = model(data)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        torch_xla.sync()


def train_synced_first(model, batches, optimizer):
    for x, y in batches:
        torch_xla.sync()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_accumulating(model, batches, optimizer, accum_steps):
    for i, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        xm.mark_step()


def train_traced(model, batches, lr):
    for step, (x, y) in enumerate(batches):
        with xp.StepTrace("train_step", step_num=step):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
                    p.grad = None


class Trainer:
    def __init__(self, model, train_data, optimizer):
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        for source, targets in self.train_data:
            self._run_batch(source, targets)
            torch_xla.sync()


class PlainSGD(torch.optim.Optimizer):
    """An optimizer's own step(): its callers' `optimizer.step()` get the sync."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


def set_lr(optimizer, lr):
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


def clip_weights(critic, clip_value):
    for p in critic.parameters():
        p.data.clamp_(-clip_value, clip_value)


def clip_and_zero_grads(model):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data.clamp_(-1, 1)
    for p in model.parameters():
        p.grad.zero_()


@torch.no_grad()
def ema_update(ema_model, model, decay=0.999):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)
