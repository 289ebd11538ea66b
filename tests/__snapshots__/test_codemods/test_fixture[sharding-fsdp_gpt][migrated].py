# fixture: target=spmd
"""A small GPT trained with FullyShardedDataParallel (FSDP v1), torchrun-style: each
transformer block its own FSDP unit (a transformer auto-wrap policy), bfloat16 mixed
precision, full sharding, each block's activations recomputed in the backward pass (FSDP's
non-reentrant checkpoint wrapper, as PyTorch's FSDP tutorial applies it), AdamW. The tokens are generated, so it runs anywhere.

    torchrun --standalone --nproc_per_node=8 fsdp_gpt.py

Runnable: tests/test_sharding.py verifies its SPMD migration on four CPU devices.
[XLA102, XLA105, XLA109, XLA201, XLA202, XLA604, XLA609, XLA620, XLA621, XLA624, XLA906]
"""

import argparse
import functools
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl)
import torch_xla
import torch_xla.distributed.fsdp.wrap as xla_wrap
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2


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


torch.__future__.set_swap_module_params_on_conversion(True)

VOCAB, WIDTH, HEADS, SEQ = 64, 32, 4, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, n_layer):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(SEQ, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8, help="the global batch")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    xs.set_global_mesh(xs.get_1d_mesh("fsdp"))
    rank, world_size = xr.global_ordinal(), xr.world_size()
    local_rank = xr.local_ordinal()
    torch.manual_seed(0)

    model = GPT(args.layers).to("xla")
    policy = functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={Block})
    model = FSDPv2(
        model,
        auto_wrap_policy=policy,
    )
    model.forward = torch.autocast("xla", dtype=torch.bfloat16)(model.forward)
    non_reentrant_wrapper = functools.partial(xla_checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    xla_apply_activation_checkpointing(
        model, checkpoint_wrapper_fn=non_reentrant_wrapper, check_fn=lambda m: isinstance(m, Block)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    tokens = torch.randint(0, VOCAB, (args.steps, args.batch_size, SEQ + 1), generator=torch.Generator().manual_seed(1))
    per_rank = args.batch_size // world_size
    for step in range(args.steps):
        batch = tokens[step, rank * per_rank : (rank + 1) * per_rank].to("xla")
        xs.mark_sharding(batch, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (batch.dim() - 1))
        loss = model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    xr.use_spmd()
    main()
