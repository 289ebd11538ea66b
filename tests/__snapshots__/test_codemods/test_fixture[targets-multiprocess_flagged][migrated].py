# fixture: target=multiprocess
"""What the multi-process form cannot take as it is: flagged, nothing half-converted. [XLA103, XLA109, XLA201, XLA302, XLA402, XLA650, XLA651, XLA659, XLA701]"""
import sys

import torch
from torch.utils.data import DataLoader

from data import Samples
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)


def main(dataset):
    loader = DataLoader(dataset, batch_size=8, sampler=torch.utils.data.RandomSampler(dataset))
    # TODO(xla-migrate): XLA651 `train_loader`: give the DataLoader its dataset and `shuffle` by keyword or first argument, then a `DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())`
    train_loader = DataLoader(dataset, 8, True)
    model = torch.nn.Linear(2, 2).to(torch_xla.device())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in pl.MpDeviceLoader(loader, torch_xla.device()):
        loss = model(x).sum()
        loss.backward()
        xm.optimizer_step(optimizer, barrier=True)
    return 0


# TODO(xla-migrate): XLA659 the `__main__` block ends the process with a status; under `torch_xla.launch` the workers' return values are lost: launch `def _mp_fn(index)` and exit after it
if __name__ == "__main__":
    sys.exit(main(Samples()))
