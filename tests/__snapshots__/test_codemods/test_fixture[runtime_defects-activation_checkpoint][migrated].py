"""Activation checkpointing as GPT trainers and FSDP scripts write it: torch's checkpoint called
on each block, passed on with its options, and the forms with no XLA equivalent.
[XLA102, XLA906]"""

import functools

import torch
import torch.nn as nn
import torch.utils.checkpoint
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing
from torch.utils.checkpoint import checkpoint_sequential
import torch_xla


def xla_checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """torch.utils.checkpoint.checkpoint on the XLA device, written by xla-migrate (XLA906): torch's
    fails there (it asks for a ``torch.xla`` device module torch_xla 2.9 does not register);
    torch_xla's recomputes the function's activations in the backward pass behind an
    optimization barrier, so that XLA does not merge the recomputation into the forward. It
    has only the reentrant form, which passes no keyword to the function and gives the
    function's parameters no gradient unless an input requires one: there the function runs
    whole (the same values and gradients, without the memory saved) (xla-migrate's docs/runtime_defects.md)."""
    import torch_xla.utils.checkpoint

    for option in ("context_fn", "determinism_check", "debug"):  # torch's; none changes what is computed
        kwargs.pop(option, None)
    grad = torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    if kwargs or not grad:
        return function(*args, **kwargs)
    return torch_xla.utils.checkpoint.checkpoint(function, *args, preserve_rng_state=preserve_rng_state)


class GPT(nn.Module):
    def __init__(self, blocks, gradient_checkpointing=True):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.gradient_checkpointing = gradient_checkpointing
        self._checkpoint = functools.partial(xla_checkpoint, use_reentrant=False)

    def forward(self, x):
        for block in self.blocks:
            if self.gradient_checkpointing and self.training:
                x = xla_checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self._checkpoint(self.blocks[-1], x)


def layers(model, x):
    # no XLA form: flagged
    # TODO(xla-migrate): XLA906 `checkpoint_sequential(model.blocks, 2, x, use_reentrant=F...`: torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which torch_xla 2.9 does not register ("module 'torch' has no attribute 'xla'"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md), and torch_xla has no checkpoint_sequential: call `xla_checkpoint` (what XLA906 writes for `checkpoint`) on each segment instead
    y = checkpoint_sequential(model.blocks, 2, x, use_reentrant=False)
    # TODO(xla-migrate): XLA906 `apply_activation_checkpointing(model, check_fn=lambda m: ...`: the wrapped layers run torch's checkpoint: torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which torch_xla 2.9 does not register ("module 'torch' has no attribute 'xla'"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md); wrap them with `torch_xla.distributed.fsdp.checkpoint_module(layer)` instead, or call torch_xla's `torch_xla.utils.checkpoint.checkpoint` in their forward
    apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Linear))
    return y.to("xla")
