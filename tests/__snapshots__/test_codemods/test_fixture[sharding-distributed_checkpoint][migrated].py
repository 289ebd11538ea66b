"""A sharded model's checkpoint with torch.distributed.checkpoint, as FSDP2 scripts write it:
saved and loaded with torch_xla's SPMD planners, a planner of the script's own kept.
[XLA620, XLA622, XLA626]"""

import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint import FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.default_planner import DefaultSavePlanner

from model import Net
import torch
import torch_xla.distributed.spmd as xs
import torch_xla.experimental.distributed_checkpoint as xc
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


def main(path):
    xr.use_spmd()
    xs.set_global_mesh(xs.get_1d_mesh("fsdp"))
    model = Net()
    xla_fully_shard(model, xs.get_global_mesh(), xs.get_global_mesh().axis_names[-1])
    state = {"model": model.state_dict()}
    dcp.save(state, checkpoint_id=path, planner=xc.SPMDSavePlanner())
    dcp.load(
        state,
        storage_reader=FileSystemReader(path),
        planner=xc.SPMDLoadPlanner(),
    )
    dcp.save(state, storage_writer=FileSystemWriter(path), planner=DefaultSavePlanner())
    model.load_state_dict(state["model"])
