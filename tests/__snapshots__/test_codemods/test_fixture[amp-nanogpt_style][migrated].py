"""nanoGPT's train.py precision set-up: dtype string, dtype table, autocast context, scaler. [XLA102, XLA104, XLA109, XLA201, XLA301, XLA401, XLA402]"""

import math
from contextlib import nullcontext

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

device = "xla"
dtype = "bfloat16"
gradient_accumulation_steps = 4
grad_clip = 1.0
compile = False

device_type = "xla" if "xla" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.bfloat16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

model = torch.nn.Linear(64, 64).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)


def get_batch():
    x = torch.randn(8, 64)
    if device_type == "xla":
        x = x.to(device, non_blocking=True)
    return x


X = get_batch()
for iter_num in range(10):
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            loss = model(X).pow(2).mean() / gradient_accumulation_steps
        X = get_batch()
        loss.backward()
    if grad_clip != 0.0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    torch_xla.sync()
    optimizer.zero_grad(set_to_none=True)
