"""Activation checkpointing as GPT trainers and FSDP scripts write it: torch's checkpoint called
on each block, passed on with its options, FSDP's wrappers (applied by a check, and one
wrapper passed on with its options), and the forms with no XLA equivalent.
[XLA102, XLA906]"""

import functools

import torch
import torch.nn as nn
import torch.utils.checkpoint
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    apply_activation_checkpointing)
from torch.distributed.fsdp.wrap import ModuleWrapPolicy
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


def xla_checkpoint_wrapper(module, checkpoint_impl=None, checkpoint_fn=None, **checkpoint_fn_kwargs):
    """FSDP's checkpoint_wrapper on the XLA device, written by xla-migrate (XLA906): torch's wrapper
    runs torch's checkpoint, which fails there; torch_xla's ``checkpoint_module`` gives the module a
    forward that recomputes its activations in the backward pass (torch_xla's reentrant checkpoint
    where an input requires a gradient, the forward whole otherwise: the same values and gradients,
    whichever checkpoint the options chose). The module is changed in place and returned: no
    wrapper module, its parameters keep their names (xla-migrate's docs/runtime_defects.md)."""
    from torch_xla.distributed.fsdp import checkpoint_module

    return checkpoint_module(module)


def xla_apply_activation_checkpointing(model, checkpoint_wrapper_fn=None, check_fn=lambda _: True):
    """FSDP's apply_activation_checkpointing on the XLA device, written by xla-migrate (XLA906): each
    module inside ``model`` that ``check_fn`` picks gets its activations recomputed in the backward
    pass by ``xla_checkpoint_wrapper``, whichever wrapper ``checkpoint_wrapper_fn`` names (torch's run
    torch's checkpoint, which fails there; an offloading one's host memory is not XLA's)."""
    for module in list(model.modules())[1:]:
        if check_fn(module):
            xla_checkpoint_wrapper(module)
    return model


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
    xla_apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Linear))
    wrapper = functools.partial(xla_checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    xla_apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrapper, check_fn=lambda m: m in model.blocks)
    # no XLA form: flagged
    # TODO(xla-migrate): XLA906 `checkpoint_sequential(model.blocks, 2, x, use_reentrant=F...`: torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which torch_xla 2.9 does not register ("module 'torch' has no attribute 'xla'"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md), and torch_xla has no checkpoint_sequential: call `xla_checkpoint` (what XLA906 writes for `checkpoint`) on each segment instead
    y = checkpoint_sequential(model.blocks, 2, x, use_reentrant=False)
    # TODO(xla-migrate): XLA906 `apply_activation_checkpointing(model, auto_wrap_policy=Mo...`: the wrapped layers run torch's checkpoint: torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which torch_xla 2.9 does not register ("module 'torch' has no attribute 'xla'"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md); with an auto-wrap policy it has no form here: give each layer the policy picks `torch_xla.distributed.fsdp.checkpoint_module(layer)` instead
    apply_activation_checkpointing(model, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    return y.to("xla")
