"""A GPU trainer using what a TorchTPU migration turns into torch.tpu calls: device
selection, torch.cuda.synchronize, seeding the device generator, a side stream and timing
events, float16 autocast with a GradScaler, a model moved with .cuda(), tensors made on the
device, DDP over NCCL at world size 1. tpu_features_tpu.py is its migration by hand."""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
assert torch.cuda.is_available() and torch.cuda.device_count() == 1
device = torch.device("cuda:0")
torch.cuda.set_device(0)
dist.init_process_group(backend="nccl", rank=0, world_size=1)

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 4)).cuda()
model = nn.parallel.DistributedDataParallel(model, device_ids=[0])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
data = torch.randn(256, 16)
labels = (data[:, :4].sum(1) > 0).long() + (data[:, 4:8].sum(1) > 0).long() * 2
side = torch.cuda.Stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

for step in range(20):
    with torch.cuda.stream(side):
        x = data[step * 8 % 256 : step * 8 % 256 + 8].to(device, non_blocking=True)
        y = labels[step * 8 % 256 : step * 8 % 256 + 8].cuda(non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    start.record()
    bias = torch.zeros(4, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x) + bias, y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    end.record()
    torch.cuda.synchronize()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f} ({start.elapsed_time(end):.1f} ms) on {torch.cuda.get_device_name()}")
time.sleep(0)
dist.destroy_process_group()
