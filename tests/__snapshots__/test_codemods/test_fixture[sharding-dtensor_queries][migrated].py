# fixture: target=spmd
"""The helpers an FSDP2 script imports, as PyTorch's FSDP2 example writes them (its utils.py and
checkpoint.py): checks of the sharded model, a full state dict gathered from DTensors and loaded
back into their layouts (by the DTensor API, and by the state-dict API broadcasting from rank 0),
and the prefetching it schedules by hand. The module neither joins a group nor builds a mesh: it
is part of the SPMD program its script becomes. [XLA604, XLA628]"""

import torch
from torch.distributed.fsdp import FSDPModule
from torch.distributed.checkpoint.state_dict import StateDictOptions
from torch.distributed.tensor import DTensor, Shard
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


def load_full_model_state_dict(model: FSDPModule, full_sd, dcp_api: bool):
    if dcp_api:
        xla_set_model_state_dict(
            model=model,
            model_state_dict=full_sd,
            options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True),
        )
        return
    meta_sharded_sd = model.state_dict()
    sharded_sd = {}
    for param_name, full_tensor in full_sd.items():
        sharded_meta_param = meta_sharded_sd.get(param_name)
        sharded_tensor = xla_distribute_like(full_tensor, sharded_meta_param)
        sharded_sd[param_name] = torch.nn.Parameter(sharded_tensor)
    model.load_state_dict(sharded_sd, strict=False, assign=True)

