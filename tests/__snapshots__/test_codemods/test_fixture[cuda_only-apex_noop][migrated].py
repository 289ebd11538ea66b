"""The PyTorch counterparts of apex, and an `amp` that is an amplitude."""

import torch
import torch_xla

model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.LayerNorm(16)).to(torch_xla.device())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
amp = 0.5
with torch.autocast("xla", dtype=torch.bfloat16):
    loss = model(torch.randn(4, 16, device=torch_xla.device())).sum() * amp
loss.backward()
optimizer.step()
torch_xla.sync()
