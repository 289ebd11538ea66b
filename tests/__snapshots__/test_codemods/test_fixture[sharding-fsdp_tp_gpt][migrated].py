# fixture: target=spmd
"""A small Llama-style model trained in two dimensions, as PyTorch's FSDP + tensor-parallel example
writes it: a ("dp", "tp") device mesh whose "tp" sub-mesh splits each block (ColwiseParallel into
the attention and the feed-forward, RowwiseParallel out of them with the sequence split,
SequenceParallel norms, PrepareModuleInput gathering the sequence back, of a positional input and
of a keyword one), the output head split by
vocabulary with its loss under ``loss_parallel``, then FSDP2's ``fully_shard`` over the "dp"
sub-mesh. The tokens are generated, so it runs anywhere.

    torchrun --standalone --nproc_per_node=4 fsdp_tp_gpt.py

Runnable: tests/test_sharding.py verifies its SPMD migration on four and eight CPU devices.
[XLA102, XLA105, XLA109, XLA201, XLA202, XLA604, XLA609, XLA620, XLA622, XLA623, XLA624, XLA625]
"""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def xla_parallelize_module(module, device_mesh=None, parallelize_plan=None, axis=None):
    """torch's parallelize_module in SPMD's form: each submodule the plan names (``*`` matches any
    one name of the path, as in torch) gets its weights annotated with the layout its style gives
    them over the mesh's tensor-parallel axis (``axis``, else the mesh's last): "colwise"
    (ColwiseParallel) splits a Linear's weight by output features and its bias with it (an
    Embedding's weight by columns), "rowwise" (RowwiseParallel) a Linear's weight by input
    features, its bias whole (an Embedding's weight by rows); "sequence" (SequenceParallel) keeps
    the weights whole and splits the module's input and output on the sequence dimension, 1;
    "input" and "output" (PrepareModuleInput/Output) annotate activations only. A style written
    as a dict adds the layouts of the module's activations: "input" (its positional inputs),
    "input_kwargs" (its keyword inputs, by name) and "output", each the dimension split over the
    axis or None (whole), one a tensor where a tuple.
    XLA's partitioner adds the collectives the styles make by hand; the forward computes on whole
    tensors. Written by xla-migrate (XLA625)."""
    from fnmatch import fnmatchcase

    mesh = device_mesh or xs.get_global_mesh()
    axis = axis or (mesh.axis_names[-1] if mesh.axis_names else len(mesh.mesh_shape) - 1)

    def shard(param, spec):
        xs.mark_sharding(param, mesh, spec)
        param.xla_partition_spec = spec  # what FSDP2's form adds its axis to

    def mark_keywords(kwargs, dims):
        for name, dim in dims.items():
            if name in kwargs:
                mark(kwargs[name], dim)

    def mark(tensors, dims):
        tensors = tensors if isinstance(tensors, tuple) else (tensors,)
        dims = dims if isinstance(dims, tuple) else (dims,) * len(tensors)
        for tensor, dim in zip(tensors, dims):
            if isinstance(tensor, torch.Tensor):
                spec = [None] * tensor.dim()
                if dim is not None:
                    spec[dim] = axis
                xs.mark_sharding(tensor, mesh, tuple(spec))

    plan = parallelize_plan.items() if isinstance(parallelize_plan, dict) else [("", parallelize_plan)]
    for path, style in plan:
        if isinstance(style, str):
            style = {"style": style, **({"input": 1, "output": 1} if style == "sequence" else {})}
        if not isinstance(style, dict):
            raise TypeError(f"{style!r} has no SPMD form here: see the XLA608 note where the plan is written")
        pattern = path.split(".") if path else []
        for name, sub in module.named_modules():
            parts = name.split(".") if name else []
            if len(parts) != len(pattern) or not all(map(fnmatchcase, parts, pattern)):
                continue
            embedding = isinstance(sub, torch.nn.Embedding)
            if style["style"] == "colwise":
                shard(sub.weight, (None, axis) if embedding else (axis, None))
                if getattr(sub, "bias", None) is not None:
                    shard(sub.bias, (axis,))
            elif style["style"] == "rowwise":
                shard(sub.weight, (axis, None) if embedding else (None, axis))
            if "input" in style:
                sub.register_forward_pre_hook(lambda _, args, dims=style["input"]: mark(args, dims))
            if "input_kwargs" in style:
                sub.register_forward_pre_hook(
                    lambda _, args, kwargs, dims=style["input_kwargs"]: mark_keywords(kwargs, dims), with_kwargs=True
                )
            if "output" in style:
                sub.register_forward_hook(lambda _, args, out, dims=style["output"]: mark(out, dims))
    return module


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

VOCAB, WIDTH, HEADS, SEQ, TP = 64, 32, 4, 16, 2


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wk = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wv = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wo = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        # the heads this rank holds: wq, wk and wv are split by columns over the "tp" mesh
        q, k, v = (w(x).view(b, t, -1, WIDTH // HEADS).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(WIDTH, 4 * WIDTH, bias=False)
        self.w2 = nn.Linear(4 * WIDTH, WIDTH, bias=False)
        self.w3 = nn.Linear(WIDTH, 4 * WIDTH, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm = nn.RMSNorm(WIDTH)
        self.attention = Attention()
        self.ffn_norm = nn.RMSNorm(WIDTH)
        self.feed_forward = FeedForward()

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(x=self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, n_layer):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Block() for _ in range(n_layer))
        self.norm = nn.RMSNorm(WIDTH)
        self.output = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx):
        h = self.tok_embeddings(idx)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    world_size = xr.world_size()
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count() // TP, TP), ("dp", "tp"))
    xs.set_global_mesh(mesh)
    torch.manual_seed(0)

    model = Transformer(args.layers).to("xla")
    xla_parallelize_module(
        model,
        mesh,
        {
            "tok_embeddings": {"style": "rowwise", "output": 1},
            "norm": "sequence",
            "output": "colwise",
        },
        axis="tp",
    )
    for block in model.layers:
        plan = {
            "attention_norm": "sequence",
            "attention": {"style": "input", "input": (None,)},
            "attention.wq": "colwise",
            "attention.wk": "colwise",
            "attention.wv": "colwise",
            "attention.wo": {"style": "rowwise", "output": 1},
            "ffn_norm": "sequence",
            "feed_forward": {"style": "input", "input_kwargs": {"x": None}},
            "feed_forward.w1": "colwise",
            "feed_forward.w2": {"style": "rowwise", "output": 1},
            "feed_forward.w3": "colwise",
        }
        xla_parallelize_module(block, mesh, plan, axis="tp")
    xla_fully_shard(model, mesh, "dp")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, foreach=False)

    # the ranks of a tensor-parallel group train on the same rows: seeded by the data-parallel rank
    dp_rank = xr.global_ordinal()
    for step in range(args.steps):
        batch = torch.randint(0, VOCAB, (args.batch_size, SEQ + 1), generator=torch.Generator().manual_seed(step))
        batch = batch.to("xla")
        xs.mark_sharding(batch, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (batch.dim() - 1))
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten(0, 1))
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()
        if xr.global_ordinal() == 0:
            print(f"step {step} (dp rank {dp_rank}): loss {loss.item():.4f}")


if __name__ == "__main__":
    xr.use_spmd()
    main()
