"""torch.device calls that name no CUDA device: CPU, MPS, XLA and devices chosen at run time."""

import torch
import torch_xla

cpu = torch.device("cpu")
mps = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
xla = torch.device("xla")
tpu = torch_xla.device()
chosen = torch.device(cpu.type)
same = torch.device(tpu)
meta = torch.device(type="meta")

model = torch.nn.Linear(3, 3).to(xla)
