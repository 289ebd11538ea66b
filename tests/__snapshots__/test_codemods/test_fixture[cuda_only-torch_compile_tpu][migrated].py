# fixture: runtime=torch-tpu
"""Under TorchTPU: torch.compile's inductor backend becomes TorchTPU's backend="tpu", by default;
GPU tuning (mode=, options=, cudagraphs) goes with inductor. [XLA810]"""

import torch

model = torch.compile(torch.nn.Linear(8, 8), backend="tpu")
tuned = torch.compile(torch.nn.Linear(8, 8), backend="tpu")
graphed = torch.compile(torch.nn.Linear(8, 8), backend="tpu")
net = torch.nn.Linear(8, 8)
net.compile(backend="tpu")


@torch.compile(backend="tpu")
def step(x):
    return x * 2


@torch.compile(dynamic=False, backend="tpu")
def scaled(x):
    return x * 3
