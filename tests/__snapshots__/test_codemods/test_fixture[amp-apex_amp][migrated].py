"""NVIDIA apex amp (O1) in an apex-era script: amp.initialize goes and the forward pass becomes
bfloat16 autocast, scale_loss becomes the backward pass on the loss, master_params the
optimizer's parameters, and apex's state leaves the checkpoints; the apex import goes. [XLA103, XLA109, XLA201, XLA302, XLA408, XLA501]"""

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
criterion = torch.nn.MSELoss()


def train(loader, max_norm):
    for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
        # the forward pass
        with torch.autocast("xla", dtype=torch.bfloat16):
            output = model(x)
            loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
        optimizer.step()
        torch_xla.sync()


def save(path, epoch):
    checkpoint = {"epoch": epoch, "model": model.state_dict()}
    xm.save(checkpoint, path)


def resume(path):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
