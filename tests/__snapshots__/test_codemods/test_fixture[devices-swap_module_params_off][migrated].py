"""A script that turns parameter swapping off before it moves its model. [XLA103, XLA109]"""

import torch
from torch import __future__ as future
import torch_xla

future.set_swap_module_params_on_conversion(False)

model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# TODO(xla-migrate): XLA109 `model.cuda()`: this file turns parameter swapping off, so a module moved to the XLA device gets new Parameter objects: optimizers built before the move update stale CPU tensors and tied weights come apart; move the module before anything holds its parameters
model.to(torch_xla.device())
