"""FSDP2 and device meshes in the forms a training script writes them: a 2-D mesh takes the
devices the runtime has, fully_shard's keywords go with their reason or are flagged.
[XLA608, XLA620, XLA622, XLA623]"""

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def build(model, tp_size):
    xr.use_spmd()
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count() // 4, 4), ("dp", "tp"))
    xs.set_global_mesh(mesh)
    # the second axis is not a number the rule can keep
    # TODO(xla-migrate): XLA608 `init_device_mesh` is `torch.distributed.device_mesh`: build an `xs.Mesh` for SPMD instead, see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
    other = init_device_mesh("cuda", (2, tp_size), mesh_dim_names=("dp", "tp"))
    for layer in model.layers:
        for param in layer.parameters():
            xs.mark_sharding(param, mesh, (mesh.axis_names[-1],) + (None,) * (param.dim() - 1))
    for param in model.head.parameters():
        xs.mark_sharding(param, xs.get_global_mesh(), (xs.get_global_mesh().axis_names[-1],) + (None,) * (param.dim() - 1))
    # TODO(xla-migrate): XLA608 `fully_shard` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see https://docs.pytorch.org/xla/master/perf/fsdp.html
    fully_shard(model, mesh=mesh, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))
    # TODO(xla-migrate): XLA608 `fully_shard` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see https://docs.pytorch.org/xla/master/perf/fsdp.html
    sharded = fully_shard(model.embed, mesh=mesh)
    return sharded, other
