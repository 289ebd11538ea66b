"""A nanoGPT-style trainer compiling its model: by default `torch.compile` goes, since inductor
cannot compile for the XLA device and the lazy tensor compiles the whole step anyway; the model
trains as it did eagerly. [XLA101, XLA109, XLA201, XLA810]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Attention(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x):
        return torch.tanh(self.proj(x))


compile = True  # use PyTorch 2.0 to compile the model to be faster
device = torch_xla.device()
model = Attention(16).to(device)
if compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model
optimizer = torch.optim.Adam(model.parameters())
unwanted_prefix = "_orig_mod."  # what resuming strips from a compiled model's checkpoint keys
for step in range(3):
    loss = model(torch.randn(4, 16, device=device)).sum()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
