"""Moving tensors and modules with .to(): string devices, device variables, non_blocking=True. [XLA101, XLA102, XLA109, XLA405]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Sequential(
    nn.Linear(4, 8),
    nn.ReLU(),
    nn.Linear(8, 1),
).to("xla")

x = torch.randn(32, 4).to("xla")
y = torch.randn(32, 1).to('xla', non_blocking=True)
z = torch.randn(32, 4).to(
    "xla",
    dtype=torch.float16,
)
w = torch.empty(3, device="xla")

device = torch_xla.device()
inputs = x.to(device, non_blocking=True)
half = x.to(torch.float16)
