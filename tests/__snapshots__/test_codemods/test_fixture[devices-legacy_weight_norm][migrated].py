"""A temporal convolution block with the hook-based weight_norm, in each spelling: it becomes the
parametrization, which a move to the XLA device with parameters swapped can carry; its removal and
the reads of its parts follow.
[XLA103, XLA109, XLA113]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class TemporalBlock(nn.Module):
    def __init__(self, channels, kernel, dilation):
        super().__init__()
        padding = (kernel - 1) * dilation
        self.conv1 = torch.nn.utils.parametrizations.weight_norm(nn.Conv1d(channels, channels, kernel, padding=padding, dilation=dilation))
        self.conv2 = nn.utils.parametrizations.weight_norm(nn.Conv1d(channels, channels, kernel, padding=padding, dilation=dilation))
        self.head = torch.nn.utils.parametrizations.weight_norm(nn.Linear(channels, 1), dim=None)

    def forward(self, x):
        y = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        return self.head(y[:, :, -1])

    def remove_norms(self):
        torch.nn.utils.parametrize.remove_parametrizations(self.conv1, "weight")
        nn.utils.parametrize.remove_parametrizations(self.conv2, tensor_name="weight")


model = TemporalBlock(8, 3, 2).to(torch_xla.device())
print("gain", model.conv1.parametrizations.weight.original0.norm().item())
