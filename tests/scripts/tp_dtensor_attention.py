"""Tensor-parallel attention whose projections hand DTensors to scaled_dot_product_attention
(``ColwiseParallel(use_local_output=False)``, as PyTorch's 2-D FSDP + tensor-parallel example
writes its wq/wk/wv), trained in float32. verify's reference runs it at world size 1, where
DTensor has no sharding strategy for the CPU's flash attention: the reference leaves the plan
unapplied there (child/emulation.py), which is the unsharded model.

    torchrun --standalone --nproc_per_node=4 tp_dtensor_attention.py
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

WIDTH, HEADS, SEQ = 32, 4, 8


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wk = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wv = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wo = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (w(x).view(b, t, -1, WIDTH // HEADS).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


def main():
    dist.init_process_group("nccl")
    world_size = int(os.environ["WORLD_SIZE"])
    mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("tp",))
    torch.manual_seed(0)
    model = Attention().cuda()
    plan = {name: ColwiseParallel(use_local_output=False) for name in ("wq", "wk", "wv")}
    parallelize_module(model, mesh["tp"], {**plan, "wo": RowwiseParallel()})
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(4):
        torch.manual_seed(step)
        x = torch.randn(2, SEQ, WIDTH, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
