# fixture: runtime=torch-tpu
"""TorchTPU: a module moved to the "tpu" device (PyTorch's privateuse1 backend, which torch does
not treat as CUDA's kind when it moves a CPU parameter) gets new Parameter objects unless
they are swapped: an optimizer built before the move keeps them. [XLA103, XLA109]"""

import torch
import torch.nn as nn

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Linear(10, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.to("tpu")

for step in range(3):
    loss = model(torch.randn(4, 10).to("tpu")).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
