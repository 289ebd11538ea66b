"""A sharded model's checkpoint with torch.distributed.checkpoint, as FSDP2 scripts write it:
saved and loaded with torch_xla's SPMD planners, a planner of the script's own kept.
[XLA620, XLA622, XLA626]"""

import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint import FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.default_planner import DefaultSavePlanner

from model import Net
import torch_xla.distributed.spmd as xs
import torch_xla.experimental.distributed_checkpoint as xc
import torch_xla.runtime as xr


def main(path):
    xr.use_spmd()
    xs.set_global_mesh(xs.get_1d_mesh("fsdp"))
    model = Net()
    for param in model.parameters():
        xs.mark_sharding(param, xs.get_global_mesh(), (xs.get_global_mesh().axis_names[-1],) + (None,) * (param.dim() - 1))
    state = {"model": model.state_dict()}
    dcp.save(state, checkpoint_id=path, planner=xc.SPMDSavePlanner())
    dcp.load(
        state,
        storage_reader=FileSystemReader(path),
        planner=xc.SPMDLoadPlanner(),
    )
    dcp.save(state, storage_writer=FileSystemWriter(path), planner=DefaultSavePlanner())
    model.load_state_dict(state["model"])
