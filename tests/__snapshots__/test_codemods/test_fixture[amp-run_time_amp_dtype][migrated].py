"""An --amp-dtype option turned into the autocast dtype by getattr(torch, ...): a launch
command's `--amp-dtype float16` means bfloat16 once migrated, and the GradScaler it enables goes. [XLA101, XLA109, XLA201, XLA401, XLA402, XLA406]"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--amp-dtype", type=lambda name: "bfloat16" if name in ("float16", "half") else name, default="bfloat16", choices=["float16", "float32", "bfloat16"])
parser.add_argument('--eval-dtype', default='bfloat16', type=lambda name: 'bfloat16' if name in ('float16', 'half') else name)
args = parser.parse_args()

device = torch_xla.device()
model = nn.Linear(16, 4).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
amp_dtype = getattr(torch, args.amp_dtype)
print(f"autocast in {args.amp_dtype}")

for step in range(4):
    x, y = torch.randn(8, 16, device=device), torch.randint(0, 4, (8,), device=device)
    with torch.autocast("xla", dtype=amp_dtype):
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()

with torch.no_grad(), torch.autocast("xla", dtype=getattr(torch, args.eval_dtype)):
    print(model(x).float().sum())
