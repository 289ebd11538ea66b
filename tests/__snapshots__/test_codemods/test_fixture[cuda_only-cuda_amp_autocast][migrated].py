"""CUDA autocast and GradScaler from torch.cuda.amp, imported both ways."""

import torch
from torch.cuda.amp import GradScaler, autocast
import torch_xla

model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# TODO(xla-migrate): XLA899 `GradScaler` is CUDA mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)`, which needs no GradScaler; see https://docs.pytorch.org/xla/master/perf/amp.html
scaler = GradScaler()

for _ in range(2):
    optimizer.zero_grad()
    # TODO(xla-migrate): XLA899 `autocast` is CUDA mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)`, which needs no GradScaler; see https://docs.pytorch.org/xla/master/perf/amp.html
    with autocast():
        loss = model(torch.randn(4, 8)).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch_xla.sync()

# TODO(xla-migrate): XLA899 `torch.cuda.amp.autocast` is CUDA mixed precision: use `torch.autocast('xla', dtype=torch.bfloat16)`, which needs no GradScaler; see https://docs.pytorch.org/xla/master/perf/amp.html
with torch.cuda.amp.autocast(dtype=torch.float16):
    out = model(torch.randn(4, 8))
