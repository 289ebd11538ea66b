# fixture: target=spmd
"""A single-device script in the SPMD form: one process, batches sharded over a data mesh. [XLA101, XLA109, XLA201, XLA302, XLA670, XLA671, XLA701]"""
import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)


def train(model, loader, optimizer, device):
    for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        xs.mark_sharding(x, xs.get_global_mesh(), ("data",) + (None,) * (x.dim() - 1))
        xs.mark_sharding(y, xs.get_global_mesh(), ("data",) + (None,) * (y.dim() - 1))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()


def finetune(model, batches, optimizer, device):
    for batch in batches:
        loss = model(batch["x"].to(device)).sum()
        loss.backward()
        optimizer.step()
        torch_xla.sync()


def main():
    device = torch_xla.device()
    model = torch.nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    train(model, DataLoader(data, batch_size=16, shuffle=True), optimizer, device)


if __name__ == "__main__":
    xr.use_spmd()
    xs.set_global_mesh(xs.get_1d_mesh("data"))
    main()
