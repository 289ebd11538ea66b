# fixture: target=spmd
"""A small GPT trained with tensor parallelism, torchrun-style, as PyTorch's tensor-parallel
examples write it: each block's attention and MLP split over a one-dimensional "tp" mesh
(``parallelize_module`` with ``ColwiseParallel`` into the heads and the MLP's hidden layer,
``RowwiseParallel`` out of them), the heads per rank counted from the mesh, AdamW. The tokens
are generated, so it runs anywhere.

    torchrun --standalone --nproc_per_node=4 tp_gpt.py

Runnable: tests/test_sharding.py verifies its SPMD migration on four and eight CPU devices.
[XLA102, XLA105, XLA109, XLA201, XLA202, XLA604, XLA609, XLA620, XLA623, XLA624, XLA625]
"""

import argparse

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


torch.__future__.set_swap_module_params_on_conversion(True)

VOCAB, WIDTH, HEADS, SEQ = 64, 32, 4, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = HEADS
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.q = nn.Linear(WIDTH, WIDTH)
        self.k = nn.Linear(WIDTH, WIDTH)
        self.v = nn.Linear(WIDTH, WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.out = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.ln_1(x)
        # the heads this rank holds: q, k and v are split by columns over the mesh
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (self.q(h), self.k(h), self.v(h)))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        return x + self.out(F.gelu(self.fc(self.ln_2(x))))


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
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    local_rank = xr.local_ordinal()
    tp_mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(),), ("tp",))
    xs.set_global_mesh(tp_mesh)
    torch.manual_seed(0)

    model = GPT(args.layers).to("xla")
    for block in model.blocks:
        block.heads = HEADS // xr.world_size()
        plan = {
            "q": "colwise",
            "k": "colwise",
            "v": "colwise",
            "proj": "rowwise",
            "fc": "colwise",
            "out": "rowwise",
        }
        xla_parallelize_module(block, tp_mesh, plan)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, foreach=False)

    # every rank of the tensor-parallel group trains on the same batch
    tokens = torch.randint(0, VOCAB, (args.steps, args.batch_size, SEQ + 1), generator=torch.Generator().manual_seed(1))
    for step in range(args.steps):
        batch = tokens[step].to("xla")
        xs.mark_sharding(batch, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (batch.dim() - 1))
        loss = model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()
        if xr.global_ordinal() == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    xr.use_spmd()
    main()
