"""Code that already chose bfloat16, or float16 that is no torch dtype."""

import numpy as np
import torch
import torch_xla

model = torch.nn.Linear(8, 8).to(torch_xla.device(), torch.bfloat16)
x = torch.zeros(4, 8, dtype=torch.bfloat16)
table = np.zeros(4, dtype=np.float16)
dtype = "bfloat16"
label = "float16"  # a label, not a dtype
print("inputs are float16 on the GPU, bfloat16 here")
