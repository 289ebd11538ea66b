"""Every spelling of CUDA autocast, however imported, as a with and as a decorator. [XLA102, XLA103, XLA104, XLA109, XLA401]"""

from contextlib import nullcontext

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Linear(8, 8).to(torch_xla.device())
x = torch.randn(4, 8, device="xla")
use_amp = True

with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp, cache_enabled=False):  # positional enabled, dtype, cache_enabled
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast('xla', dtype=torch.bfloat16, enabled=use_amp, cache_enabled=False):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16):
    y = model(x)
with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
    y = model(x)

# The device type comes from a variable, as in nanoGPT.
device = "xla"
device_type = "xla" if "xla" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}["bfloat16"]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
with ctx:
    y = model(x)

# A device variable this file does not choose: float16 says it is CUDA autocast.
def forward(model, batch, dev):
    with torch.autocast("xla", dtype=torch.bfloat16):
        return model(batch)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    @torch.autocast("xla", dtype=torch.bfloat16)
    def forward(self, x):
        return self.proj(x)

    @torch.autocast("xla", dtype=torch.bfloat16)
    def project(self, x):
        return self.proj(x)


# Custom autograd functions declare how they run under autocast.


class ScaledSoftmax(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.bfloat16)
    def forward(ctx, x):
        return torch.softmax(x, dim=-1)

    @staticmethod
    @torch.amp.custom_bwd(device_type="xla")
    def backward(ctx, grad):
        return grad


class Square(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @torch.amp.custom_bwd(device_type="xla")
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad
