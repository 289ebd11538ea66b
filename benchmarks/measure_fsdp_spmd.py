"""Which SPMD form carries FSDP-style code faithfully: measured on a tiny GPT (issue 41).

Runs one small GPT-like model (token and position embeddings, pre-norm blocks of causal
attention and an MLP, a final norm and an LM head) for --steps AdamW steps in each form
below, on CPU PJRT in SPMD mode over CPU_NUM_DEVICES virtual devices (one process), and
compares each step's loss with the same model trained eagerly on the CPU, unsharded:

  replicated      SPMD on, nothing annotated but the batch (the data-parallel baseline)
  fsdpv2          torch_xla's SpmdFullyShardedDataParallel(model) over a ("fsdp",) mesh
                  set with xs.set_global_mesh, the batch sharded on "fsdp"
  fsdpv2_wrap     the same with auto_wrap_policy=torch_xla's transformer_auto_wrap_policy
                  ({Block}): each block its own FSDPv2 unit
  fsdpv2_autocast FSDPv2 with its forward under torch.autocast("xla", dtype=torch.bfloat16)
                  (what FSDP's MixedPrecision(param_dtype=torch.bfloat16) becomes)
  fsdpv2_torch_policy  the same with torch's own transformer_auto_wrap_policy, as an FSDP
                  v1 script spells it (torch_xla calls policies with other keywords)
  fully_shard_as_marks  FSDP2's layout as marks: each block's parameters, then every
                  parameter of the model (the blocks' a second time), dim 0 over "fsdp"
  mark_sharding   xs.mark_sharding of every parameter's largest dimension over "fsdp"
                  (FSDPv2's spec, without its wrapper) and the batch over "fsdp"
  dtensor         init_device_mesh("xla", (n,), mesh_dim_names=("fsdp",)) and
                  distribute_module(model, mesh, partition_fn) with distribute_tensor(
                  param, mesh, [Shard(0)]) (torch forwards both to torch_xla)
  fully_shard     FSDP2's fully_shard(block, mesh=<the "xla" DeviceMesh>) per block, then
                  fully_shard(model, mesh=...)

For each: whether it trains, the largest relative difference of a step's loss from the
eager reference, the graphs compiled (CompileTime count) and the compilations after the
second step. Run it twice, in float32 and in float64:

    PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 .venv/bin/python benchmarks/measure_fsdp_spmd.py
    PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 .venv/bin/python benchmarks/measure_fsdp_spmd.py --float64
    ... --forms fsdpv2,mark_sharding --steps 6

The table of 2026-12-05 is in docs/decisions.md ("FSDP on SPMD: what we measured").
"""

from __future__ import annotations

import argparse
import functools
import os
import traceback

os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("CPU_NUM_DEVICES", "4")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB, WIDTH, HEADS, BLOCKS, SEQ, BATCH = 64, 32, 4, 2, 16, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln2 = nn.LayerNorm(WIDTH)
        self.fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.out = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Embedding(SEQ, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.ln = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, VOCAB, (steps, BATCH, SEQ + 1), generator=g)
    return [(d[:, :-1], d[:, 1:]) for d in data]


def fresh_model(dtype):
    torch.manual_seed(0)
    return GPT().to(dtype)


def eager_losses(steps, dtype):
    model = fresh_model(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for x, y in batches(steps):
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def build(form, dtype):
    """(model to train, function sharding a batch tensor) for one form, under SPMD."""
    import numpy as np
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n,), ("fsdp",))
    xs.set_global_mesh(mesh)
    device = torch_xla.device()
    model = fresh_model(dtype)

    def shard_batch(t):
        xs.mark_sharding(t, mesh, ("fsdp",) + (None,) * (t.dim() - 1))
        return t

    if form == "replicated":
        return model.to(device), shard_batch
    if form.startswith("fsdpv2"):
        from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2

        kwargs = {}
        if form == "fsdpv2_wrap":
            from torch_xla.distributed.fsdp.wrap import transformer_auto_wrap_policy

            kwargs["auto_wrap_policy"] = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
        elif form == "fsdpv2_torch_policy":
            from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

            kwargs["auto_wrap_policy"] = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
        if form == "fsdpv2_autocast":
            model = model.to(device)
            wrapped = FSDPv2(model)

            def forward(*args, **kwargs):
                with torch.autocast("xla", dtype=torch.bfloat16):
                    return wrapped(*args, **kwargs)

            wrapped.train_step = forward
            return wrapped, shard_batch
        # the default shard_output: the first output's dim 0 over "fsdp" (here a scalar loss)
        return FSDPv2(model.to(device), **kwargs), shard_batch
    if form == "fully_shard_as_marks":
        # FSDP2's layout (each parameter Shard(0) over the mesh), written as marks: fully_shard(block)
        # for each block, then fully_shard(model), which marks the blocks' parameters a second time
        model = model.to(device)
        for module in [*model.blocks, model]:
            for p in module.parameters():
                xs.mark_sharding(p, mesh, ("fsdp",) + (None,) * (p.dim() - 1))
        return model, shard_batch
    if form == "mark_sharding":
        model = model.to(device)
        for p in model.parameters():
            spec = [None] * p.dim()
            spec[list(p.shape).index(max(p.shape))] = "fsdp"
            xs.mark_sharding(p, mesh, tuple(spec))
        return model, shard_batch
    if form == "dtensor_param":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_module, distribute_tensor

        dmesh = init_device_mesh("xla", (n,), mesh_dim_names=("fsdp",))

        def partition(name, module, mesh):  # the DTensor tutorial's partition_fn, as written
            for pname, p in list(module.named_parameters(recurse=False)):
                module.register_parameter(pname, nn.Parameter(distribute_tensor(p, mesh, [Shard(0)])))

        return distribute_module(model, dmesh, partition), shard_batch
    if form == "dtensor":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_module, distribute_tensor

        dmesh = init_device_mesh("xla", (n,), mesh_dim_names=("fsdp",))

        def partition(name, module, mesh):
            for p in list(module.parameters(recurse=False)):
                distribute_tensor(p.data if p.device.type == "xla" else p, mesh, [Shard(0)])

        model = model.to(device)
        return distribute_module(model, dmesh, partition), shard_batch
    if form == "fully_shard":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        dmesh = init_device_mesh("xla", (n,), mesh_dim_names=("fsdp",))
        model = model.to(device)
        for block in model.blocks:
            fully_shard(block, mesh=dmesh)
        return fully_shard(model, mesh=dmesh), shard_batch
    raise ValueError(form)


def spmd_losses(form, steps, dtype):
    import torch_xla
    import torch_xla.debug.metrics as met

    met.clear_all()
    model, shard_batch = build(form, dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    device = torch_xla.device()
    losses, compiles_after_two = [], None
    for step, (x, y) in enumerate(batches(steps)):
        x, y = shard_batch(x.to(device)), shard_batch(y.to(device))
        loss = getattr(model, "train_step", model)(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
        losses.append(loss.item())
        if step == 1:
            compiles_after_two = (met.metric_data("CompileTime") or [0])[0]
    compiles = (met.metric_data("CompileTime") or [0])[0]
    specs = [torch_xla._XLAC._get_xla_sharding_spec(p) for p in model.parameters()]
    sharded = sum("devices=" in spec for spec in specs)
    return losses, compiles, compiles - (compiles_after_two or 0), f"{sharded}/{len(specs)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--float64", action="store_true")
    parser.add_argument(
        "--forms",
        default="replicated,fsdpv2,fsdpv2_wrap,fsdpv2_torch_policy,fsdpv2_autocast,fully_shard_as_marks,mark_sharding,dtensor,dtensor_param,fully_shard",
    )
    args = parser.parse_args()
    dtype = torch.float64 if args.float64 else torch.float32

    import torch_xla.runtime as xr

    xr.use_spmd()
    results = {}
    for form in args.forms.split(","):
        try:
            results[form] = spmd_losses(form, args.steps, dtype)
        except Exception as error:  # noqa: BLE001 (a form that fails is a row of the table)
            results[form] = traceback.format_exception_only(type(error), error)[-1].strip()
    # after the XLA runs: autograd sizes its device queues at the first backward, and an eager
    # one first leaves none for the XLA device (an internal assert in the engine)
    reference = eager_losses(args.steps, dtype)
    print(f"{dtype}, {xr.global_runtime_device_count()} devices, {args.steps} AdamW steps")
    print("eager CPU reference:", " ".join(f"{v:.10g}" for v in reference))
    print(f"{'form':22} {'trains':6} {'max rel diff':>12} {'graphs':>6} {'after step 2':>12} {'sharded':>7}  note")
    for form, result in results.items():
        if isinstance(result, str):
            print(f"{form:22} {'no':6} {'-':>12} {'-':>6} {'-':>12} {'-':>7}  {result[:200]}")
            continue
        losses, compiles, late, sharded = result
        diff = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(
            f"{form:22} {'yes':6} {diff:12.2e} {compiles:6d} {late:12d} {sharded:>7}  "
            + " ".join(f"{v:.8g}" for v in losses)
        )


if __name__ == "__main__":
    main()
