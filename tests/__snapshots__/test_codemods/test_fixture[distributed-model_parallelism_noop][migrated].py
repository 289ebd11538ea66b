"""PyTorch/XLA's own FSDP and SPMD: nothing to flag."""

import torch_xla.distributed.spmd as xs
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

model = FSDP(model)
xs.mark_sharding(tensor, mesh, ("data", None))
