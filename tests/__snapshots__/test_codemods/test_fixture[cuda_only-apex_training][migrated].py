"""An apex-era training script: fused optimizer and LayerNorm, amp opt levels, apex DDP. [XLA102, XLA201, XLA408, XLA807]"""

import torch
from apex.normalization import FusedLayerNorm
from apex.optimizers import FusedAdam, FusedLAMB
from apex.parallel import LARC
from apex.parallel import DistributedDataParallel as ApexDDP
import torch_xla

# TODO(xla-migrate): XLA807 `FusedLayerNorm` is apex's fused CUDA LayerNorm: use `torch.nn.LayerNorm`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
model = torch.nn.Sequential(torch.nn.Linear(16, 16), FusedLayerNorm(16))
# TODO(xla-migrate): XLA807 `FusedAdam` is apex's fused CUDA Adam: use `torch.optim.AdamW` (FusedAdam's default `adam_w_mode=True`) or `torch.optim.Adam`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
optimizer = FusedAdam(model.parameters(), lr=1e-3, weight_decay=0.01)
# TODO(xla-migrate): XLA807 `FusedLAMB` is apex's fused CUDA LAMB: PyTorch has no LAMB; use `torch.optim.AdamW` or a LAMB written in PyTorch ops; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
lamb = FusedLAMB(model.parameters(), lr=1e-3)
# TODO(xla-migrate): XLA807 `LARC` is apex's layer-wise adaptive rate wrapper of an optimizer (LARS), not data parallelism: write its step in PyTorch ops (each parameter's update scaled by `trust * norm(p) / (norm(grad) + weight_decay * norm(p))`, clipped as LARC clips), which XLA compiles into the step; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
lars = LARC(torch.optim.SGD(model.parameters(), lr=0.1), trust_coefficient=0.001, clip=False)
# TODO(xla-migrate): XLA807 `ApexDDP` is apex's CUDA data parallelism: use `torch.nn.parallel.DistributedDataParallel` with the `xla` process group backend, or `xm.optimizer_step` in `torch_xla.launch`; see https://docs.pytorch.org/xla/master/perf/ddp.html
model = ApexDDP(model)

for x in [torch.randn(4, 16, device="xla")]:
    with torch.autocast("xla", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
