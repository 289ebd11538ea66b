# fixture: target=multiprocess
"""A single-device training script with a main(): the guide's multi-process form. [XLA101, XLA109, XLA201, XLA302, XLA501, XLA650, XLA651, XLA652, XLA659]"""
import argparse
import logging

import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger(__name__)
LOG_EVERY = 10


def make_data(n):
    return TensorDataset(torch.randn(n, 8), torch.randint(0, 2, (n,)))


def train(model, loader, optimizer, device):
    model.train()
    for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer, barrier=True)
        if step % LOG_EVERY == 0:
            # progress
            if xm.is_master_ordinal(local=False):
                print(f"step {step} loss {loss.item():.4f}")
                logger.info("step %d", step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    device = torch_xla.device()
    model = torch.nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_dataset = make_data(256)
    train_loader = DataLoader(train_dataset, batch_size=32, drop_last=True, sampler=DistributedSampler(train_dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))
    val_loader = DataLoader(make_data(64), batch_size=32)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train(model, train_loader, optimizer, device)
        if xm.is_master_ordinal(local=False):
            print(f"epoch {epoch} done")
    xm.save(model.state_dict(), "model.pt")


def _mp_fn(index):
    torch.__future__.set_swap_module_params_on_conversion(True)
    main()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
