"""nanoGPT's torchrun switch: DDP when torchrun set RANK, one process otherwise.

$ torchrun --standalone --nproc_per_node=8 train.py
$ python -m torch.distributed.launch --nproc_per_node=8 --use_env train.py [XLA102, XLA105, XLA109, XLA602, XLA603, XLA604, XLA609]
"""

import os

import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla
import torch_xla.distributed.xla_backend
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)

backend = "xla"  # 'nccl', 'gloo', etc.
ddp = int(os.environ.get("RANK", -1)) != -1  # is this a ddp run?
if ddp:
    init_process_group(backend="xla", init_method="xla://")
    ddp_rank = xr.global_ordinal()
    ddp_local_rank = xr.local_ordinal()
    ddp_world_size = xr.world_size()
    device = "xla"
    master_process = ddp_rank == 0  # this process will do logging, checkpointing etc.
    seed_offset = ddp_rank  # each process gets a different seed
else:
    master_process = True
    seed_offset = 0
    ddp_world_size = 1
    device = "xla"

model = GPT(config)
model.to(device)
if ddp:
    model = DDP(model, gradient_as_bucket_view=True)
local = xr.local_ordinal()
if ddp:
    destroy_process_group()
