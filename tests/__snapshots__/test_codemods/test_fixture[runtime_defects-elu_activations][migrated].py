"""ELU, SELU and CELU in every spelling: torch_xla 2.9 differentiates them wrong for negative
inputs, so the fix calls functions that compute the same values in ops XLA gets right,
and modules of classes that are the torch ones with that forward; in-place forms are right and
stay. [XLA101, XLA109, XLA201, XLA901]"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla


def xla_elu(input, alpha=1.0, inplace=False):
    """F.elu, written by xla-migrate (XLA901) so that XLA differentiates it right: torch_xla 2.9's
    backward of ELU is wrong for negative inputs (xla-migrate's docs/runtime_defects.md)."""
    if inplace:
        return torch.nn.functional.elu(input, alpha, inplace=True)  # its backward is right in place
    return torch.where(input > 0, input, alpha * torch.expm1(input.clamp(max=0)))


def xla_selu(input, inplace=False):
    """F.selu, written by xla-migrate (XLA901) so that XLA differentiates it right: torch_xla 2.9's
    backward of SELU is wrong for negative inputs (xla-migrate's docs/runtime_defects.md)."""
    if inplace:
        return torch.nn.functional.selu(input, inplace=True)  # its backward is right in place
    negative = 1.6732632423543772848170429916717 * torch.expm1(input.clamp(max=0))
    return 1.0507009873554804934193349852946 * torch.where(input > 0, input, negative)


def xla_celu(input, alpha=1.0, inplace=False):
    """F.celu, written by xla-migrate (XLA901) so that XLA differentiates it right: torch_xla 2.9's
    backward of CELU is wrong for negative inputs (xla-migrate's docs/runtime_defects.md)."""
    if inplace:
        return torch.nn.functional.celu(input, alpha, inplace=True)  # its backward is right in place
    return torch.where(input > 0, input, alpha * torch.expm1(input.clamp(max=0) / alpha))


class XlaELU(torch.nn.ELU):
    """nn.ELU with xla_elu as its forward (xla-migrate XLA901)."""

    def forward(self, input):
        return xla_elu(input, self.alpha, self.inplace)


class XlaSELU(torch.nn.SELU):
    """nn.SELU with xla_selu as its forward (xla-migrate XLA901)."""

    def forward(self, input):
        return xla_selu(input, self.inplace)


class XlaCELU(torch.nn.CELU):
    """nn.CELU with xla_celu as its forward (xla-migrate XLA901)."""

    def forward(self, input):
        return xla_celu(input, self.alpha, self.inplace)


torch.__future__.set_swap_module_params_on_conversion(True)


class Block(nn.Module):
    def __init__(self, width, act_layer=XlaELU):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.act = act_layer()
        self.gate = XlaSELU()
        self.tail = nn.Sequential(nn.Linear(width, width), XlaCELU(alpha=2.0), nn.ELU(inplace=True))

    def forward(self, x):
        h = xla_elu(self.proj(x), alpha=0.5)
        h = F.elu(h, inplace=True)  # in place: its backward is right
        h = xla_selu(h) + xla_celu(h, 1.5) + xla_celu(h, alpha=0.8)
        return self.tail(self.gate(self.act(h)))


device = torch_xla.device()
model = Block(16).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(5):
    x = torch.randn(8, 16, device=device)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
