"""Checkpoints that carry the GradScaler's state: old ones must still load after migration. [XLA103, XLA108, XLA109, XLA201, XLA302, XLA401, XLA402, XLA501]"""

import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

model = torch.nn.Linear(16, 4).to(torch_xla.device())
optimizer = torch.optim.Adam(model.parameters())


def save_checkpoint(path, epoch):
    xm.save(
        {
            "epoch": epoch,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
        },
        path,
    )


def save_small(path):
    state = {"model": model.state_dict()}
    xm.save(state, path)


def load_checkpoint(path):
    if not os.path.exists(path):
        return 0
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]


def train(loader):
    for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
