# fixture: target=spmd
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs


def train(model, loader, device):
    for x, y in pl.MpDeviceLoader(loader, device):
        xs.mark_sharding(x, xs.get_global_mesh(), ("data",) + (None,) * (x.dim() - 1))
        xs.mark_sharding(y, xs.get_global_mesh(), ("data",) + (None,) * (y.dim() - 1))
        model(x, y)
