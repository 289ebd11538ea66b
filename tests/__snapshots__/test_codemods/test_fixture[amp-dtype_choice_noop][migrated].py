"""Autocast dtypes that are not CUDA's to choose: CPU autocast, and a script already on XLA
that keeps its --device=cpu branch."""

import argparse
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="xla")
parser.add_argument("--bf16", action="store_true")
args = parser.parse_args()

# CPU autocast chooses between bfloat16 and float32; a float16 elsewhere is not its business.
cpu_dtype = torch.bfloat16 if args.bf16 else torch.float32
with torch.autocast("cpu", dtype=cpu_dtype, enabled=args.bf16):
    y = nn.Linear(8, 8)(torch.randn(2, 8))

# nanoGPT once migrated: the device type is "xla" or "cpu", the dtype the user's.
device = args.device
device_type = "xla" if "xla" in device else "cpu"
dtype = "bfloat16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
model = nn.Linear(8, 8).to(device)
with ctx:
    y = model(torch.randn(2, 8, device=device))
print(y.dtype, torch_xla.device_count())
