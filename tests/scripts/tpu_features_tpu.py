"""tpu_features.py migrated to TorchTPU by hand (--runtime torch-tpu): torch.cuda.X as
torch.tpu.X, .cuda() as .tpu(), the "tpu" device, bfloat16 autocast without a GradScaler,
the "tpu" process-group backend."""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
torch.manual_seed(0)
torch.tpu.manual_seed_all(0)
assert torch.tpu.is_available() and torch.tpu.device_count() == 1
device = torch.device("tpu:0")
torch.tpu.set_device(0)
dist.init_process_group(backend="tpu", rank=0, world_size=1)

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 4)).tpu()
model = nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randn(256, 16)
labels = (data[:, :4].sum(1) > 0).long() + (data[:, 4:8].sum(1) > 0).long() * 2
side = torch.tpu.Stream()
start, end = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)

for step in range(20):
    with torch.tpu.stream(side):
        x = data[step * 8 % 256 : step * 8 % 256 + 8].to(device, non_blocking=True)
        y = labels[step * 8 % 256 : step * 8 % 256 + 8].tpu(non_blocking=True)
    torch.tpu.current_stream().wait_stream(side)
    assert x.is_tpu
    start.record()
    bias = torch.zeros(4, device="tpu")
    with torch.autocast("tpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x) + bias, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    end.record()
    torch.tpu.synchronize()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f} ({start.elapsed_time(end):.1f} ms) on {torch.tpu.get_device_name()}")
time.sleep(0)
dist.destroy_process_group()
