# fixture: unsafe-fixes
"""Inputs and targets moved to the device in one tuple assignment and both sliced by the step:
each gets its own index_select. [XLA101, XLA109, XLA201, XLA706]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
x, y = torch.randn(512, 8), torch.randn(512, 1)
x, y = x.to(device), y.to(device)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
B = 32
for step in range(len(x) // B):
    xb, yb = x.index_select(0, torch.arange(step * B, min((step + 1) * B, len(x))).to(x.device)), y.index_select(0, torch.arange(step * B, min((step + 1) * B, len(y))).to(y.device))
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch_xla.sync()
