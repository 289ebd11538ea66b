"""FSDP2 and device meshes in the forms a training script writes them: a 2-D mesh takes the
devices the runtime has, fully_shard's keywords go with their reason or are flagged.
[XLA103, XLA109, XLA302, XLA608, XLA620, XLA622, XLA623, XLA624]"""

import torch
from torch.distributed.device_mesh import init_device_mesh
import numpy as np
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)


def build(model, tp_size, loader, batches, loss_fn):
    xr.use_spmd()
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count() // 4, 4), ("dp", "tp"))
    xs.set_global_mesh(mesh)
    # the second axis is computed, not a number or a name the rule can keep
    # TODO(xla-migrate): XLA608 `init_device_mesh` is `torch.distributed.device_mesh`: build an `xs.Mesh` for SPMD instead, see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
    other = init_device_mesh("cuda", (2, tp_size // 2), mesh_dim_names=("dp", "tp"))
    # axes by position, the device type read at run time (PyTorch's tensor-parallel examples)
    flat = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(),))
    xs.set_global_mesh(flat)
    # sub-meshes the rules cannot follow (an xs.Mesh has none): flagged
    # TODO(xla-migrate): XLA623 `mesh["dp"]`: an `xs.Mesh` has no sub-meshes; pass the mesh and name the axis (`xla_parallelize_module(module, mesh, plan, axis="tp")`, `xs.mark_sharding(t, mesh, ("dp", None))`), or keep the sub-mesh in a name of its own used only as a mesh argument (https://docs.pytorch.org/xla/master/perf/spmd_basic.html)
    groups = (mesh["dp"], mesh["tp"])
    for layer in model.layers:
        for param in layer.parameters():
            xs.mark_sharding(param, mesh, (mesh.axis_names[-1],) + (None,) * (param.dim() - 1))
    for param in model.head.parameters():
        xs.mark_sharding(param, xs.get_global_mesh(), (xs.get_global_mesh().axis_names[-1],) + (None,) * (param.dim() - 1))
    for param in model.parameters():
        xs.mark_sharding(param, mesh, (mesh.axis_names[-1],) + (None,) * (param.dim() - 1))
    model.forward = torch.autocast("xla", dtype=torch.bfloat16)(model.forward)
    for param in model.embed.parameters():
        xs.mark_sharding(param, mesh, (mesh.axis_names[-1],) + (None,) * (param.dim() - 1))
    sharded = model.embed
    for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
        xs.mark_sharding(x, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (x.dim() - 1))
        xs.mark_sharding(y, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (y.dim() - 1))
        loss_fn(model(x), y).backward()
    step = 0
    while step < 10:
        head = model.head.to(torch_xla.device())  # a module moved in the loop (it is called) is no batch
        batch = next(batches).to(torch_xla.device())
        xs.mark_sharding(batch, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (batch.dim() - 1))
        loss_fn(head(batch)).backward()
        step += 1
    return sharded, other
