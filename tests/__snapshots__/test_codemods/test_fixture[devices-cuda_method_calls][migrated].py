"""`.cuda()`, `.cuda(0)` and `.cuda(non_blocking=True)` on tensors, modules and losses. [XLA103, XLA109]"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from mymodels import encoder
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 10)

    def forward(self, x):
        return F.relu(self.fc(x))


model = Net().to(torch_xla.device())
criterion = nn.CrossEntropyLoss().to(torch_xla.device())
inputs = torch.randn(8, 10).to(torch_xla.device(), non_blocking=True)
targets = torch.randint(0, 10, (8,)).to(torch_xla.device(), non_blocking=True)
mask = torch.ones(8).to(torch_xla.device())
weights = torch.ones(10).to(torch_xla.device(), non_blocking=True)
encoder.to(torch_xla.device())

loss = criterion(model(inputs), targets)  # forward on the GPU
loss.backward()
model = model.cpu()
