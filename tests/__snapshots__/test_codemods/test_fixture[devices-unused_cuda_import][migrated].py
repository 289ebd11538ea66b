"""Imports of CUDA modules that nothing uses go, by every spelling; one the file uses stays for the
rules that convert its uses. [XLA103, XLA105, XLA109, XLA114]"""

import torch
from torch import nn, optim
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Linear(4, 2).to(torch_xla.device())
optimizer = optim.SGD(model.parameters(), lr=0.1)
torch_xla.sync(wait=True)
