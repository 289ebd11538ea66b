# fixture: target=multiprocess
"""A flat tutorial script: the module-level training code moves into the worker. [XLA101, XLA109, XLA201, XLA302, XLA650, XLA651, XLA659]"""
import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler

BATCH = 16


def evaluate(x):
    with torch.no_grad():
        return model(x.to(device))


def _mp_fn(index):
    global device, model
    torch.__future__.set_swap_module_params_on_conversion(True)
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.Adam(model.parameters())
    kwargs = {"batch_size": BATCH}
    kwargs.update({"num_workers": 0})
    train_dataset = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    train_loader = DataLoader(train_dataset, **kwargs, sampler=DistributedSampler(train_dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))
    for epoch in range(3):
        train_loader.sampler.set_epoch(epoch)
        for x, y in pl.MpDeviceLoader(train_loader, device):
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            xm.optimizer_step(opt, barrier=True)
        print(epoch, evaluate(torch.ones(1, 4)))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
