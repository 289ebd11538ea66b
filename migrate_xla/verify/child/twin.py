"""The twin of the reference (``perturb``): the same float32 training rounded as XLA rounds
it, to measure how far rounding alone carries it (compare.py)."""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode


def _one_pass_batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Batch norm in training with its statistics in one pass, Var = E[x^2] - E[x]^2, as XLA
    expands BatchNormTraining: in float32 that cancels where the mean is large against the
    spread (measured on CPU PJRT: 8x64x32x32 of mean 5 and deviation 3, output and gradients
    5e-6 from float64 against 3e-7 for eager's two-pass kernel; of mean 1000 and deviation 1,
    XLA's output is NaN, eager's right)."""
    dims = [0, *range(2, input.dim())]
    shape = [1, -1] + [1] * (input.dim() - 2)
    mean = input.mean(dims)
    var = (input * input).mean(dims) - mean * mean
    if running_mean is not None:
        count = input.numel() // input.size(1)
        with torch.no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach(), alpha=momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (count / max(count - 1, 1)), alpha=momentum)
    out = (input - mean.reshape(shape)) * torch.rsqrt(var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


_BATCH_NORM_ARGS = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
_CONV2D_ARGS = ("input", "weight")


class TwinMode(TorchFunctionMode):
    """The twin's arithmetic: batch norm in training with its statistics in one pass, as XLA
    computes them, and 2-d convolutions in the channels-last memory format, so that oneDNN
    sums in another order (at the cost of the reference's own kernels; without oneDNN they
    cost 1.4 times more)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") == "conv2d":
            # conv2d(input, weight, bias, ...): input and weight by position or by keyword
            args, kwargs = list(args), dict(kwargs)
            places = [(args, i) if i < len(args) else (kwargs, name) for i, name in enumerate(_CONV2D_ARGS)]
            tensors = [holder[key] if holder is args or key in holder else None for holder, key in places]
            if getattr(tensors[0], "ndim", 0) == 4 and tensors[1] is not None:
                for (holder, key), tensor in zip(places, tensors):
                    holder[key] = tensor.contiguous(memory_format=torch.channels_last)
            return func(*args, **kwargs)
        if func is torch.nn.functional.batch_norm:
            bound = {**dict(zip(_BATCH_NORM_ARGS, args)), **kwargs}
            in_training = bound.get("training") or bound.get("running_mean") is None
            if in_training and bound.get("momentum", 0.1) is not None:  # None: a cumulative average
                return _one_pass_batch_norm(**bound)
        return func(*args, **kwargs)
