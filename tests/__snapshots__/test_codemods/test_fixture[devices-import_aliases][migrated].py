"""CUDA APIs reached through aliases: import torch as t, from torch import cuda, and friends. [XLA101, XLA105]"""

import torch as t
import torch_xla

dev = torch_xla.device()
if bool(torch_xla.device_count()):
    torch_xla.manual_seed(1234)
n_gpus = torch_xla.device_count()

x = t.randn(16, 16, device=dev)
y = x @ x
torch_xla.sync(wait=True)
print(y.sum(), n_gpus)
