# fixture: runtime=torch-tpu
"""The PyTorch DDP tutorial under TorchTPU: mp.spawn stays, after the TPU launch environment; the tpu backend; DDP and the model on the process's device. [XLA105, XLA109, XLA601, XLA602, XLA603, XLA605]"""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

torch.__future__.set_swap_module_params_on_conversion(True)


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("tpu", rank=rank, world_size=world_size)


def demo_basic(rank, world_size):
    """One training step on every GPU."""
    setup(rank, world_size)
    model = ToyModel().to(torch.device("tpu"))
    ddp_model = DDP(model)
    loss = ddp_model(torch.randn(20, 10)).sum()
    loss.backward()
    dist.destroy_process_group()


def run_demo(demo_fn, world_size):
    torch.tpu.distributed.set_tpu_launch_env(nproc_per_node=world_size)
    mp.spawn(demo_fn,
             args=(world_size,),
             nprocs=world_size,
             join=True)


if __name__ == "__main__":
    n_gpus = torch.tpu.device_count()
    assert n_gpus >= 2, f"Requires at least 2 GPUs to run, but got {n_gpus}"
    world_size = n_gpus
    run_demo(demo_basic, world_size)
