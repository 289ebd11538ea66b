# fixture: unsafe-fixes
"""float16 chosen outside autocast: half models, dtype arguments, tables and config strings. [XLA102, XLA103, XLA105, XLA108, XLA109, XLA110, XLA405]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
parser.add_argument("--precision", type=str, default='bf16')
parser.add_argument("--batch-size", type=int, default=16)
args = parser.parse_args()

config = {"model_dtype": "bfloat16", "device": "xla", "name": "float16"}
dtype: str = "bfloat16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}[args.dtype]

model = nn.Linear(8, 8).to(torch_xla.device()).to(torch.bfloat16)
weights = torch.zeros(8, 8, dtype=torch.bfloat16, device="xla")
inputs = torch.randn(4, 8).to("xla", torch.bfloat16)
legacy = torch.randn(4, 8).to(torch_xla.device(), torch.bfloat16)
if weights.dtype == torch.bfloat16:
    print("half precision")


def load(path, dtype="bfloat16", eval_precision="bf16"):
    return torch.load(path, map_location="cpu").to(getattr(torch, dtype))


amp_dtype = torch.bfloat16
use_bf16 = bool(torch_xla.device_count())


# Code written for both half types keeps its float16 (bfloat16 twice would collide as a dict key).
HALF_TYPES = (torch.float16, torch.bfloat16)
BITS = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32}
if weights.dtype == torch.float16 or weights.dtype == torch.bfloat16:
    print("half")
HALF_NAMES = dict.fromkeys([torch.float16, torch.bfloat16], "half")
SUPPORTED = frozenset.union(frozenset([torch.float32]), {torch.half, torch.bfloat16})
print(torch.half, torch.bfloat16)
