# fixture: runtime=torch-tpu
"""TorchTPU: torch.load restores onto the "tpu" device where map_location named CUDA; a
map_location naming the device stays (it is the TPU now), a missing one loads to the CPU. [XLA101, XLA108]"""

import torch

device = torch.device("tpu")
rank = 0
use_cuda = True

state = torch.load("model.pt", map_location="tpu")
state = torch.load("model.pt", map_location="tpu")
state = torch.load("model.pt", map_location="tpu")
state = torch.load("model.pt", map_location="tpu")
state = torch.load("model.pt", map_location="tpu")
state = torch.load("model.pt", map_location="tpu" if use_cuda else "cpu")
state = torch.load("model.pt", map_location=device)
state = torch.load("model.pt", map_location="cpu")
state = torch.load("model.pt", map_location="cpu")
print(state)
