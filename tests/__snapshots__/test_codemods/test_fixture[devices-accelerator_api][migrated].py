"""The device-generic torch.accelerator API (PyTorch 2.6+) used to pick the GPU. [XLA105]"""

import torch
import torch_xla

if bool(torch_xla.device_count()):
    device = torch.device("xla")
else:
    device = torch.device("cpu")

world = torch_xla.device_count()
print(f"training on {device} with {world} devices")
