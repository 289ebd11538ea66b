"""mp.spawn under its other names, with the count moved into the worker where it can be. [XLA601]"""

import torch
import torch.multiprocessing
import torch_xla
import torch_xla.runtime as xr


def worker(index, config):
    world_size = xr.world_size()
    print(f"process {index} of {world_size}")


def other(index, config):
    pass


def main(config):
    torch_xla.launch(worker, args=(config,))


def main_single_argument(config):
    torch_xla.launch(other, (config,), start_method="fork")


def main_not_joined(config):
    # TODO(xla-migrate): XLA601 `torch_xla.launch` always waits for its processes; see https://docs.pytorch.org/xla/master/perf/ddp.html
    context = torch.multiprocessing.spawn(other, args=(config,), nprocs=2, join=False)
    context.join()
