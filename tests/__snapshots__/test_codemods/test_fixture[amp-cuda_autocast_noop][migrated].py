"""Autocast that is not CUDA's: CPU autocast, XLA autocast, and a device left to the caller."""

import torch
import torch_xla

model = torch.nn.Linear(8, 8)
x = torch.randn(4, 8)

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    y = model(x)
with torch.amp.autocast("cpu"):
    y = model(x)
with torch.cpu.amp.autocast():
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model.to("xla")(x.to("xla"))


def forward(model, batch, device_type):
    # bfloat16 on whatever device the caller names: right on XLA as it is.
    with torch.autocast(device_type, dtype=torch.bfloat16):
        return model(batch)
