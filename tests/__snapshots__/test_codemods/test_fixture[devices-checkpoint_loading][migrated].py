"""torch.load of GPU checkpoints: map_location as a CUDA string, a device, a lambda, or missing. [XLA101, XLA108]"""

import torch
import torch_xla

device = torch_xla.device()
model = torch.nn.Linear(4, 4)

state = torch.load("ckpt.pt", map_location="cpu")
model.load_state_dict(state)

state = torch.load("ckpt.pt", map_location="cpu")
optim_state = torch.load(
    "optim.pt",
    map_location="cpu",
)


def resume(path, rank):
    checkpoint = torch.load(path, map_location="cpu")
    return checkpoint["epoch"]


raw = torch.load("ckpt.pt", map_location="cpu")
weights = torch.load("weights.pt", weights_only=True, map_location="cpu")
ema = torch.load(
    "ema.pt",
    weights_only=True,
    map_location="cpu",
)
best = torch.load("best.pt", map_location="cpu")
