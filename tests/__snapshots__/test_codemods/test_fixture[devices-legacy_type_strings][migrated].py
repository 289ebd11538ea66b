"""A cast to a legacy CUDA type named by its string, the only CUDA type the file names. [XLA110]"""

import torch
import torch_xla

x = torch.zeros(2, 2)
y = x.to(torch_xla.device(), torch.float64)
z = x.type("torch.DoubleTensor")  # a CPU type: left as it is
