"""CUDA autocast and GradScaler from torch.cuda.amp, imported both ways. [XLA201, XLA401, XLA402]"""

import torch
import torch_xla

model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for _ in range(2):
    optimizer.zero_grad()
    with torch.autocast("xla", dtype=torch.bfloat16):
        loss = model(torch.randn(4, 8)).sum()
    loss.backward()
    optimizer.step()
    torch_xla.sync()

with torch.autocast("xla", dtype=torch.bfloat16):
    out = model(torch.randn(4, 8))
