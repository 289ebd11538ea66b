"""The DDP tutorials' integer devices: the rank as a CUDA index. [XLA605]"""

import torch
import torch_xla


def train(rank, args, model, batch):
    model = model.to(torch_xla.device())
    inputs, labels = batch[0].to(torch_xla.device(), non_blocking=True), batch[1].to(torch_xla.device())
    total = torch.zeros(2, device=torch_xla.device())
    local = torch.ones(1, device=torch_xla.device())
    return model(inputs), labels, total, local
