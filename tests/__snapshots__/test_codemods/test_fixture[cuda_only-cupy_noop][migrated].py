"""NumPy on the host and torch on the device: what CuPy code becomes."""

import numpy as np
import torch
import torch_xla

weights = np.asarray([0.1, 0.2, 0.7])
tensor = torch.as_tensor(weights).to(torch_xla.device())
cupy_installed = False
