"""FSDP2 and device meshes in the forms a training script writes them: a 2-D mesh takes the
devices the runtime has, fully_shard's keywords go with their reason or are flagged.
[XLA103, XLA109, XLA302, XLA608, XLA620, XLA622, XLA623, XLA624]"""

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy
import numpy as np
import torch_xla
import torch_xla.distributed.parallel_loader as pl
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
        xla_fully_shard(layer, mesh, mesh.axis_names[-1], reshard_after_forward=True)
    xla_fully_shard(model.head, xs.get_global_mesh(), xs.get_global_mesh().axis_names[-1])
    xla_fully_shard(model, mesh, mesh.axis_names[-1], mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))
    sharded = xla_fully_shard(model.embed, mesh, mesh.axis_names[-1])
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
