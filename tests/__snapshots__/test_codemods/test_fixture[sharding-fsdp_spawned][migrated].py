# fixture: target=spmd
"""PyTorch's FSDP tutorial ("Getting Started with Fully Sharded Data Parallel"), small: mp.spawn
starts a worker per GPU; each joins the group, reads its shard of the data through a
DistributedSampler, wraps a CNN in FSDP with a size-based auto-wrap policy, all-reduces its loss
sums to print the epoch's average and waits at a barrier before saving. The images are generated,
so it runs anywhere. Its SPMD form calls the worker once, as process 0 of 1 (XLA601), whose
process group becomes the SPMD set-up (XLA620) and whose collectives go (XLA627).

Runnable: tests/test_sharding.py verifies its SPMD migration on four and eight CPU devices.
[XLA105, XLA109, XLA201, XLA202, XLA302, XLA501, XLA601, XLA605, XLA606, XLA620, XLA621, XLA624, XLA627, XLA701]
"""

import argparse
import functools
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.fsdp.wrap as xla_wrap
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    xs.set_global_mesh(xs.get_1d_mesh("fsdp"))


def cleanup():
    pass


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 5 * 5, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=None):
    model.train()
    ddp_loss = torch.zeros(2).to(torch_xla.device())
    if sampler:
        sampler.set_epoch(epoch)
    for batch_idx, (data, target) in enumerate(pl.MpDeviceLoader(train_loader, torch_xla.device())):
        xs.mark_sharding(data, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (data.dim() - 1))
        xs.mark_sharding(target, xs.get_global_mesh(), (xs.get_global_mesh().axis_names,) + (None,) * (target.dim() - 1))
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target, reduction="sum")
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        ddp_loss[0] += loss.item()
        ddp_loss[1] += len(data)
        if batch_idx + 1 == args.steps:
            break
    if rank == 0:
        print("Train Epoch: {} \tLoss: {:.6f}".format(epoch, ddp_loss[0] / ddp_loss[1]))


def fsdp_main(rank, world_size, args):
    setup(rank, world_size)
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(512, 1, 14, 14, generator=generator)
    labels = torch.randint(0, 10, (512,), generator=generator)
    dataset = TensorDataset(images, labels)
    sampler = DistributedSampler(dataset, rank=xr.global_ordinal(), num_replicas=xr.world_size(), shuffle=True)
    train_loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    my_auto_wrap_policy = functools.partial(xla_wrap.size_based_auto_wrap_policy, min_num_params=100)
    torch.manual_seed(1)
    model = Net().to(torch_xla.device())
    model = FSDPv2(model, auto_wrap_policy=my_auto_wrap_policy)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=sampler)
        scheduler.step()
    if args.save_model:
        states = model.state_dict()
        if rank == 0:
            xm.save(states, "mnist_cnn.pt")
    cleanup()


if __name__ == "__main__":
    xr.use_spmd()
    parser = argparse.ArgumentParser(description="PyTorch MNIST FSDP example")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--save-model", action="store_true", default=False)
    args = parser.parse_args()
    torch.manual_seed(1)
    fsdp_main(0, 1, args)
