# fixture: target=multiprocess
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def loaders(train_set, test_set):
    sampler = DistributedSampler(train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=32)
    return train_loader, test_loader
