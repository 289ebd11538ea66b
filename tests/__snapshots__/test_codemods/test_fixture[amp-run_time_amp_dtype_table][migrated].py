"""A --precision option picks the autocast dtype through a table keyed fp16 / bf16 / fp32, and
makes a GradScaler for fp16 only: `--precision fp16` on the command line means bf16 once migrated. [XLA101, XLA109, XLA201, XLA401, XLA406]"""

import argparse

import torch
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

PRECISIONS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.bfloat16}

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16", choices=["fp16", "bf16", "fp32"], type=lambda name: "bf16" if name == "fp16" else name)
args = parser.parse_args()

device = torch_xla.device()
model = torch.nn.Linear(8, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
grad_scaler = None

for step in range(3):
    x, y = torch.randn(4, 8, device=device), torch.randint(0, 3, (4,), device=device)
    with torch.autocast("xla", dtype=PRECISIONS[args.precision]):
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
