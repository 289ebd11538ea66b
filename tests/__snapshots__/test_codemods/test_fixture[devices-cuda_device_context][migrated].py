"""A contrastive trainer picks its GPU with a device context: the context goes and its block
stays (other items of the `with` stay); one bound to a name is left for a person.
[XLA103, XLA105, XLA109, XLA112, XLA201, XLA899]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--gpu-index", type=int, default=0)
args = parser.parse_args()

# the GPU of this run
model = nn.Linear(16, 8).to(torch_xla.device())
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)

for step in range(5):
    x = torch.randn(32, 16).to(torch_xla.device())
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()

with torch.no_grad():
    print(model(torch.ones(1, 16).to(torch_xla.device())))

# TODO(xla-migrate): XLA899 `torch.cuda.device` selects a CUDA device: each XLA process owns one device, `torch_xla.device()`; remove it; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
with torch.cuda.device(0) as selected:
    print(selected)
