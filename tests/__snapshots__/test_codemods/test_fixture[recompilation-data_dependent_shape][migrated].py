"""Ops whose output shape follows the data, in a training loop and a forward pass. [XLA201, XLA702]"""

import torch
import torch.nn as nn
import torch_xla


class Detector(nn.Module):
    def forward(self, scores, boxes):
        # TODO(xla-migrate): XLA702 `torch.nonzero` returns as many elements as the data says: a new shape (and graph) for every count, and XLA computes it on the CPU; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        keep = torch.nonzero(scores > 0.5).squeeze(1)
        # TODO(xla-migrate): XLA702 `torch.unique` returns as many elements as the data says: a new shape (and graph) for every count, and XLA computes it on the CPU; compute it on the host outside the step, or use a fixed-size form such as `F.one_hot(x, num_classes).amax(0)` (which values occur); see https://docs.pytorch.org/xla/master/perf/recompilation.html
        labels = torch.unique(scores.argmax(-1))
        return boxes[keep], labels


def train(model, loader, optimizer):
    for x, y, mask in loader:
        out = model(x)
        # TODO(xla-migrate): XLA702 `torch.masked_select` returns as many elements as the data says: a new shape (and graph) for every count, and XLA computes it on the CPU; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        valid = torch.masked_select(out, mask)
        # TODO(xla-migrate): XLA702 `out[mask]` indexes with a boolean mask (guessed from the index): the result has as many elements as the mask is true, a new shape (and graph) for every count, and XLA computes it on the CPU; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        picked = out[mask]
        # TODO(xla-migrate): XLA702 `out[y > 0]` indexes with a boolean mask (guessed from the index): the result has as many elements as the mask is true, a new shape (and graph) for every count, and XLA computes it on the CPU; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        positive = out[y > 0]
        # TODO(xla-migrate): XLA702 `out[~mask] = ...` assigns through a boolean mask (guessed from the index): XLA computes the positions on the CPU at every step; write `x = x.masked_fill(mask, value)` or `x = torch.where(mask, value, x)`, which keep the work on the device; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        out[~mask] = 0.0
        # TODO(xla-migrate): XLA702 `torch.where(cond)` returns as many elements as the data says: a new shape (and graph) for every count, and XLA computes it on the CPU; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/xla/master/perf/recompilation.html
        rows = torch.where(y == 1)
        # TODO(xla-migrate): XLA702 `.unique()` returns as many elements as the data says: a new shape (and graph) for every count, and XLA computes it on the CPU; compute it on the host outside the step, or use a fixed-size form such as `F.one_hot(x, num_classes).amax(0)` (which values occur); see https://docs.pytorch.org/xla/master/perf/recompilation.html
        classes = y.unique()
        loss = valid.sum() + picked.sum() + positive.sum() + len(rows) + classes.numel()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
