# fixture: target=spmd
"""A small transformer trained with FSDP2 the way PyTorch's FSDP2 example does it: the accelerator
API for the device, the backend torch picks for it, the model built on the meta device, ``fully_shard``
on each block and on the whole model with a dict of options, its checks of the sharded model, then
``to_empty`` and the model's own initialisation; after the first step, its checkpoint's round trip through the
state-dict API (``--dcp-api``: the full state dicts of the model and the optimizer loaded into a new
model on the meta device, broadcast from rank 0, as a run that resumes loads them), and at the end
the full state dict gathered from the DTensors. The tokens are generated, so it runs anywhere.

    torchrun --standalone --nproc_per_node=8 fsdp2_meta.py

Runnable: tests/test_sharding.py verifies its SPMD migration on four and eight CPU devices.
[XLA105, XLA201, XLA202, XLA602, XLA604, XLA609, XLA620, XLA622, XLA628]
"""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict)
from torch.distributed.fsdp import MixedPrecisionPolicy
from torch.distributed.tensor import Shard
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def xla_placements(tensor):
    """DTensor's placements of a tensor of the SPMD program, read from the layout xla-migrate's
    marks keep (``xla_partition_spec``): for each axis of the global mesh, ``Shard(d)`` where it
    splits dimension ``d``, else ``Replicate()``. Written by xla-migrate (XLA628)."""
    from torch.distributed.tensor import Replicate, Shard

    spec = getattr(tensor, "xla_partition_spec", None) or ()
    mesh = xs.get_global_mesh()
    placements = []
    for axis in mesh.axis_names or range(len(mesh.mesh_shape)):
        split = [d for d, names in enumerate(spec) if axis == names or (isinstance(names, tuple) and axis in names)]
        placements.append(Shard(split[0]) if split else Replicate())
    return tuple(placements)


def xla_distribute_like(tensor, like):
    """DTensor's ``distribute_tensor(tensor, like.device_mesh, like.placements)`` in SPMD's form:
    ``tensor`` on the XLA device with the layout of the SPMD program's tensor ``like`` (its
    ``xla_partition_spec`` over the global mesh; whole where it has none). Written by xla-migrate
    (XLA628)."""
    tensor = tensor.to(torch_xla.device())
    spec = getattr(like, "xla_partition_spec", None)
    if spec is not None:
        xs.mark_sharding(tensor, xs.get_global_mesh(), spec)
        tensor.xla_partition_spec = spec
    return tensor


def xla_set_model_state_dict(model, model_state_dict, *, options=None):
    """torch.distributed.checkpoint's ``set_model_state_dict`` in SPMD's form: the one process holds
    the whole state dict (no broadcast from rank 0), and each of its tensors takes the place of the
    model's own, on the XLA device in that tensor's layout (a parameter on the meta device too:
    ``xla_fully_shard`` recorded its layout); ``options.strict`` is kept. Written by xla-migrate
    (XLA628)."""
    own = model.state_dict(keep_vars=True)
    loaded = {}
    for name, value in model_state_dict.items():
        like = own.get(name)
        if like is not None and torch.is_tensor(value):
            value = xla_distribute_like(value, like)
            if isinstance(like, torch.nn.Parameter):
                value = torch.nn.Parameter(value, requires_grad=like.requires_grad)
                if hasattr(like, "xla_partition_spec"):
                    value.xla_partition_spec = like.xla_partition_spec
        loaded[name] = value
    return model.load_state_dict(loaded, strict=options is None or options.strict, assign=True)


def xla_set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """torch.distributed.checkpoint's ``set_optimizer_state_dict`` in SPMD's form: loaded by torch
    without the broadcast from rank 0 (the one process holds the whole state dict), each state
    tensor of a parameter's shape then laid out as the parameter is. Written by xla-migrate (XLA628)."""
    import dataclasses

    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    options = dataclasses.replace(options or StateDictOptions(), broadcast_from_rank0=False)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
        for param, state in optimizer.state.items():
            for key, value in state.items():
                if torch.is_tensor(value) and value.dim() > 0 and value.shape == param.shape:
                    state[key] = xla_distribute_like(value, param)


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


def xla_fully_shard_again(model):
    """The marks xla_fully_shard could not make on the meta device, made on the parameters ``to_empty``
    gave ``model`` (FSDP2's initialisation: built on the meta device, sharded, then given memory).
    Written by xla-migrate (XLA622)."""
    for module in model.modules():
        if hasattr(module, "xla_fully_sharded"):
            xla_fully_shard(module, *module.xla_fully_sharded)
    return model


VOCAB, WIDTH, HEADS, SEQ = 64, 32, 4, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.proj = nn.Linear(WIDTH, WIDTH, bias=False)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(x)

    def reset_parameters(self):
        for module in (self.norm, self.qkv, self.proj, self.mlp[0], self.mlp[2]):
            module.reset_parameters()


class Transformer(nn.Module):
    def __init__(self, n_layers):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Block() for _ in range(n_layers))
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.head(h)

    def reset_parameters(self):
        self.embed.reset_parameters()
        for layer in self.layers:
            layer.reset_parameters()
        self.head.reset_parameters()


def sharded(args, fsdp_kwargs):
    with torch.device("meta"):
        model = Transformer(args.layers)
    for layer in model.layers:
        xla_fully_shard(layer, xs.get_global_mesh(), xs.get_global_mesh().axis_names[-1], **fsdp_kwargs)
    xla_fully_shard(model, xs.get_global_mesh(), xs.get_global_mesh().axis_names[-1], **fsdp_kwargs)
    assert hasattr(model, "xla_fully_sharded")
    assert all(xla_placements(param) == (Shard(0),) for param in model.parameters())
    return model


def resumed(model, optim, args, fsdp_kwargs):
    """The model and optimizer a run that resumes from their full state dicts trains."""
    saving = StateDictOptions(full_state_dict=True, cpu_offload=True)
    model_state = get_model_state_dict(model, options=saving)
    optim_state = get_optimizer_state_dict(model, optim, options=saving)
    model = sharded(args, fsdp_kwargs)
    loading = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    xla_set_model_state_dict(model=model, model_state_dict=model_state, options=loading)
    optim = torch.optim.Adam(model.parameters(), lr=1e-2)
    xla_set_optimizer_state_dict(model=model, optimizers=optim, optim_state_dict=optim_state, options=loading)
    return model, optim


def main(args):
    rank = xr.local_ordinal()
    device_type = torch.device("xla")
    device = torch.device(f"{device_type}:{rank}")
    backend = "xla"
    xs.set_global_mesh(xs.get_1d_mesh("fsdp"))
    torch.manual_seed(0)

    fsdp_kwargs = {}
    if args.mixed_precision:
        fsdp_kwargs["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    model = sharded(args, fsdp_kwargs)
    model.to_empty(device=device)
    xla_fully_shard_again(model)
    model.reset_parameters()

    optim = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(args.steps):
        if step == 1:  # resumed after one step
            model, optim = resumed(model, optim, args, fsdp_kwargs)
        x = torch.randint(0, VOCAB, (args.batch_size, SEQ + 1), device=device)
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), x[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optim.step()
        torch_xla.sync()
        optim.zero_grad()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    full = {name: param.cpu() for name, param in model.state_dict().items()}
    if rank == 0:
        print(f"saved {len(full)} tensors, {sum(t.numel() for t in full.values())} numbers")


if __name__ == "__main__":
    xr.use_spmd()
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--mixed-precision", action="store_true")
    main(parser.parse_args())
