"""Without --unsafe-fixes the ELU fix is held back: the call stays, marked with a TODO above
its statement, since torch_xla's backward of ELU would train otherwise than the GPU; so does
`torch.compile` on inductor, which cannot compile for the XLA device. [XLA101, XLA109, XLA201, XLA810, XLA901]"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Attention(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x):
        # TODO(xla-migrate): XLA901 `F.elu`: torch_xla 2.9's backward of ELU is wrong for negative inputs (the gradient is x + alpha, not alpha * exp(x); measured on CPU PJRT, and in the graph torch_xla builds, so on TPUs too) while its forward is right: the training drifts from the GPU's; the fix calls `xla_elu` instead, the same function written with `torch.where` and `torch.expm1` (which XLA differentiates right) after the file's imports; the in-place form is right and stays; see xla-migrate's docs/runtime_defects.md
        return F.elu(self.proj(x), alpha=0.5)


device = torch_xla.device()
model = Attention(16).to(device)
# TODO(xla-migrate): XLA810 `torch.compile(model)` compiles with inductor, which generates GPU (Triton) or CPU code, not XLA: `backend="openxla"` compiles for the XLA device (or drop `torch.compile`: XLA compiles the training step anyway); see https://docs.pytorch.org/xla/master/perf/dynamo.html
model = torch.compile(model)
optimizer = torch.optim.Adam(model.parameters())
for step in range(3):
    loss = model(torch.randn(4, 16, device=device)).sum()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
