# fixture: target=spmd
"""A tensor-parallel script that checks its GPUs before it builds its mesh, as PyTorch's
tensor-parallel examples do (``assert _world_size % 2 == 0``, a world size divisible by the
tensor-parallel size) and refuses to run on fewer; in the SPMD program these checks count the
devices, while the world size the script logs stays the program's. The data is generated, so it
runs anywhere.

    torchrun --standalone --nproc_per_node=4 device_count_checks.py

Runnable: tests/test_sharding.py runs its migration on four CPU devices.
[XLA102, XLA105, XLA109, XLA201, XLA202, XLA604, XLA609, XLA620, XLA623, XLA624, XLA625, XLA629]
"""

import os
import sys

import torch
import torch.nn as nn
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

TP = 2


def main():
    _world_size = xr.world_size()
    assert xr.global_runtime_device_count() % TP == 0, f"World size {xr.global_runtime_device_count()} needs to be divisible by TP size {TP}"
    if xr.global_runtime_device_count() < TP:
        print(f"needs {TP} GPUs, found {xr.global_runtime_device_count()}")
        sys.exit(1)
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count() // TP, TP), ("dp", "tp"))
    xs.set_global_mesh(mesh)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to("xla")
    xla_parallelize_module(model, mesh, {"0": "colwise", "2": "rowwise"}, axis="tp")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(step)).to("xla")
        xs.mark_sharding(x, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (x.dim() - 1))
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()
        print(f"step {step}: loss {loss.item():.4f} (world size {_world_size})")


if __name__ == "__main__":
    xr.use_spmd()
    main()
