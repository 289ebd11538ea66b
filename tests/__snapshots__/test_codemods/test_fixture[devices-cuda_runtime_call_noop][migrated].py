"""Runtime calls that are already XLA's, or belong to objects that merely share a name."""

import torch
import torch_xla
import torch_xla.runtime as xr
from accelerate import Accelerator

accelerator = Accelerator()
torch.manual_seed(0)
torch_xla.manual_seed(0)

world = xr.world_size()
ordinal = xr.local_ordinal()
if accelerator.is_main_process:
    accelerator.wait_for_everyone()

x = torch.randn(4, 4, device=torch_xla.device())
torch_xla.sync()
