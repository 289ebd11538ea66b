"""Legacy CUDA types imported by name, and torch under another name: the factories use the
file's name for torch, and the imports of the types go once nothing uses them. [XLA110]
"""

import numpy as np
import torch as t
import torch_xla

x = t.empty(2, 3, dtype=t.float32, device=torch_xla.device()).zero_()
y = t.randn(3).to(torch_xla.device(), t.int64)
z = t.tensor(np.zeros(3), dtype=t.float64, device=torch_xla.device())
