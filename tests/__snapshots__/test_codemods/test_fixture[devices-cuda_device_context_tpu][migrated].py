# fixture: runtime=torch-tpu
"""Under TorchTPU too a process owns one device: the device context goes and its block stays.
[XLA103, XLA109, XLA112]"""

import torch
import torch.nn as nn

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Linear(16, 8).to("tpu")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(4, 16).to("tpu")).sum()
    loss.backward()
    optimizer.step()
