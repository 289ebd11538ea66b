# fixture: target=spmd
"""A small GPT trained with FSDP2, torchrun-style: ``fully_shard`` on each transformer block,
then on the whole model, over a one-dimensional device mesh (``init_device_mesh``), AdamW.
The tokens are generated, so it runs anywhere.

    torchrun --standalone --nproc_per_node=8 fsdp2_gpt.py

Runnable: tests/test_sharding.py verifies its SPMD migration on four CPU devices.
[XLA102, XLA105, XLA109, XLA201, XLA202, XLA604, XLA609, XLA620, XLA622, XLA623, XLA624]
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def xla_fully_shard(module, mesh, axis, mp_policy=None, reshard_after_forward=None, offload_policy=None):
    """FSDP2's fully_shard in SPMD's form: each parameter's first dimension split over ``axis`` of
    ``mesh``, FSDP2's Shard(0), outside the layout tensor parallelism gave it (xla_parallelize_module
    keeps each in ``xla_partition_spec``), as FSDP2 shards a tensor-parallel DTensor. The module
    keeps the call (``xla_fully_sharded``: what FSDP2's FSDPModule says); a parameter on the meta
    device has no memory to mark yet, and is marked once ``to_empty`` has given it some. FSDP2's
    options: an ``mp_policy`` with bfloat16 (or float16) parameters runs the module's forward under
    bfloat16 autocast; XLA decides when a gathered parameter is freed; nothing is offloaded to the
    host. The module's state dict's tensors keep their layouts, as FSDP2's DTensors do. Written by
    xla-migrate (XLA622)."""

    def keep_layouts(module, state_dict, prefix, local_metadata):
        for name, param in module.named_parameters():
            if prefix + name in state_dict and hasattr(param, "xla_partition_spec"):
                state_dict[prefix + name].xla_partition_spec = param.xla_partition_spec

    if not hasattr(module, "xla_fully_sharded"):
        module.register_state_dict_post_hook(keep_layouts)
    module.xla_fully_sharded = (mesh, axis)
    for param in module.parameters():
        spec = getattr(param, "xla_partition_spec", (None,) * param.dim())
        if not spec or axis in (spec[0] if isinstance(spec[0], tuple) else (spec[0],)):
            continue  # a scalar, or split over the axis already (by a call on an inner module)
        spec = (axis if spec[0] is None else (axis, spec[0]),) + spec[1:]
        if not param.is_meta:  # no memory to mark yet: to_empty makes it
            xs.clear_sharding(param)
            xs.mark_sharding(param, mesh, spec)
        param.xla_partition_spec = spec
    if getattr(mp_policy, "param_dtype", None) in (torch.bfloat16, torch.float16):
        module.forward = torch.autocast("xla", dtype=torch.bfloat16)(module.forward)
    return module


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

    local_rank = xr.local_ordinal()
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(),), ("dp",))
    xs.set_global_mesh(mesh)
    rank, world_size = xr.global_ordinal(), xr.world_size()
    torch.manual_seed(0)

    model = GPT(args.layers).to("xla")
    for block in model.blocks:
        xla_fully_shard(block, mesh, mesh.axis_names[-1])
    xla_fully_shard(model, mesh, mesh.axis_names[-1])
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
