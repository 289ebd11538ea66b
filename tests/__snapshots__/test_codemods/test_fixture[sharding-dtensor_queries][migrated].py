# fixture: target=spmd
"""The helpers an FSDP2 script imports, as PyTorch's FSDP2 example writes them (its utils.py and
checkpoint.py): checks of the sharded model, a full state dict gathered from DTensors, and the
prefetching it schedules by hand. The module neither joins a group nor builds a mesh: it is part
of the SPMD program its script becomes. [XLA604, XLA628]"""

import torch
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Shard
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


def inspect_model(model: FSDPModule):
    assert hasattr(model, "xla_fully_sharded")
    if xr.global_ordinal() == 0:
        print(model)
    for param in model.parameters():
        assert xla_placements(param) == (Shard(0),)
        assert param.dtype == torch.float32


def inspect_mixed_precision(model: FSDPModule):
    for param in model.parameters(recurse=False):
        assert param.dtype == torch.bfloat16


def set_modules_to_forward_prefetch(model, num_to_forward_prefetch):
    for i, layer in enumerate(model.layers):
        if i >= len(model.layers) - num_to_forward_prefetch:
            break


def full_model_state_dict(model: FSDPModule):
    cpu_state_dict = {}
    for name, sharded_param in model.state_dict().items():
        full_param = sharded_param
        if xr.global_ordinal() == 0:
            cpu_state_dict[name] = full_param.cpu()
    return cpu_state_dict


def full_optimizer_state(opt):
    full_state = {}
    for group_id, sharded_group in opt.state_dict()["state"].items():
        full_state[group_id] = {
            attr: value for attr, value in sharded_group.items()
        }
    return full_state
