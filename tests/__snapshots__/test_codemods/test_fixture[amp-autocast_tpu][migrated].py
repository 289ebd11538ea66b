# fixture: runtime=torch-tpu
"""Under TorchTPU: CUDA autocast goes to the "tpu" device in bfloat16, however spelled, with no
import beyond torch; custom_fwd / custom_bwd too; float16 chosen for autocast becomes bfloat16. [XLA401]"""

import torch


def forward(model, x, use_amp):
    with torch.autocast("tpu", dtype=torch.bfloat16):
        y = model(x)
    with torch.autocast("tpu", dtype=torch.bfloat16, enabled=use_amp):
        y = model(y)
    with torch.autocast("tpu", dtype=torch.bfloat16, cache_enabled=False):
        y = model(y)
    with torch.autocast("tpu", dtype=torch.bfloat16):
        y = model(y)
    with torch.autocast('tpu', dtype=torch.bfloat16, enabled=use_amp):
        y = model(y)
    with torch.autocast("tpu", dtype=torch.bfloat16):
        y = model(y)
    return y


@torch.autocast("tpu", dtype=torch.bfloat16)
def decorated(model, x):
    return model(x)


# The dtype is chosen through a table, as in nanoGPT: its float16 becomes bfloat16.
dtype = "bfloat16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}[dtype]


def forward_chosen(model, x):
    with torch.autocast("tpu", dtype=ptdtype):
        return model(x)


class Scale(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="tpu", cast_inputs=torch.bfloat16)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.amp.custom_bwd(device_type="tpu")
    def backward(ctx, grad):
        return grad * 2
