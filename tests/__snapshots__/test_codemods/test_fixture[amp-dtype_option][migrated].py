"""A --dtype option picks the autocast dtype through a table; an eval helper is given its dtype. [XLA101, XLA109, XLA201, XLA202, XLA401, XLA402, XLA405]"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}

parser = argparse.ArgumentParser(description="train a small classifier with mixed precision")
parser.add_argument("--dtype", type=str, default="bfloat16", choices=list(DTYPES))
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()

device = torch_xla.device()
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
amp_dtype = DTYPES[args.dtype]


@torch.no_grad()
def evaluate(model, x, y, dtype):
    with torch.autocast("xla", dtype=torch.bfloat16 if dtype == torch.float16 else dtype):
        return F.cross_entropy(model(x), y).item()


for step in range(args.steps):
    x = torch.randn(16, 32, device=device)
    y = torch.randint(0, 10, (16,), device=device)
    with torch.autocast("xla", dtype=amp_dtype):
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    print(f"step {step} loss {loss.item():.4f} in {args.dtype}")
print("eval loss", evaluate(model, x, y, dtype=torch.float16))
