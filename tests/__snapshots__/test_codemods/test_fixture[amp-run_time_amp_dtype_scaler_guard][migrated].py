"""GradScaler paths a string dtype option guards: made only when the option says float16,
used only when it was made. Once the option maps float16 to bfloat16 where it is read,
those branches are never taken, and they go. [XLA103, XLA109, XLA201, XLA401, XLA406]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bfloat16", choices=["float16", "bfloat16", "float32"], type=lambda name: "bfloat16" if name in ("float16", "half") else name)
args = parser.parse_args()

model = nn.Linear(8, 2).to(torch_xla.device())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = None
eval_scaler = None
if args.precision == "float16":
    print("float16: the loss is scaled")  # no scaler here: this stays, though no run prints it


def train_step(x):
    with torch.autocast("xla", dtype=getattr(torch, args.precision)):
        loss = model(x).square().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    return loss


for step in range(3):
    print(train_step(torch.randn(4, 8).to(torch_xla.device())).item())
