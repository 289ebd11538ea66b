"""Python branches on tensor values inside the training step. [XLA201, XLA202, XLA703]"""

import torch
import torch_xla


def train(model, loader, optimizer, threshold):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        # TODO(xla-migrate): XLA703 `if` on `loss.item()` reads a tensor value: the step's graph is cut and run there to get it (a host sync), and each branch traces another graph; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        if loss.item() > threshold:
            print("loss spike at", step)
        # TODO(xla-migrate): XLA703 `assert` on `torch.isfinite(loss).all()` reads a tensor value: the step's graph is cut and run there to get it (a host sync), and each branch traces another graph; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        assert torch.isfinite(loss).all(), "loss is not finite"
        # TODO(xla-migrate): XLA703 `... if ... else ...` on `torch.isnan(loss)` reads a tensor value: the step's graph is cut and run there to get it (a host sync), and each branch traces another graph; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        scale = 0.5 if torch.isnan(loss) else 1.0
        (loss * scale).backward()
        optimizer.step()
        torch_xla.sync()


def refine(model, x):
    # TODO(xla-migrate): XLA703 `while` on `model(x).abs().max().item()` reads a tensor value: the step's graph is cut and run there to get it (a host sync), and each branch traces another graph; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    while model(x).abs().max().item() > 1e-3:
        x = x * 0.5
    return x


def training_step(model, batch):
    loss = model(batch)
    # TODO(xla-migrate): XLA703 `if` on `torch.allclose(loss, loss.detach())` reads a tensor value: the step's graph is cut and run there to get it (a host sync), and each branch traces another graph; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps after `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    if not torch.allclose(loss, loss.detach()):
        raise RuntimeError("unreachable")
    return loss
