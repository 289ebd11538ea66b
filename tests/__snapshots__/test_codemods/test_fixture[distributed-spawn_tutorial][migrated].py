"""The PyTorch DDP tutorial's launch: mp.spawn over every GPU, the world size passed to the worker. [XLA109, XLA601, XLA602, XLA603, XLA605]"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla
import torch_xla.distributed.xla_backend
import torch_xla.runtime as xr


def xla_launch_device_count():
    """The devices torch_xla.launch runs the worker on, on this host, counted without starting the
    XLA runtime (a device query would, and the launch would then fail): a process per TPU chip
    (fewer where TPU_PROCESS_BOUNDS says so), a worker per device of each; on the CPU one process
    with CPU_NUM_DEVICES devices (1 unless set). Written by xla-migrate (XLA601)."""
    if xr.device_type() == "TPU":
        tpu = torch_xla._internal.tpu
        return tpu.num_local_processes() * tpu.num_logical_cores_per_chip()
    return int(os.environ.get("CPU_NUM_DEVICES", 1))


torch.__future__.set_swap_module_params_on_conversion(True)


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("xla", init_method="xla://")


def demo_basic(rank, world_size):
    """One training step on every GPU."""
    setup(rank, world_size)
    model = ToyModel().to(torch_xla.device())
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    loss = ddp_model(torch.randn(20, 10)).sum()
    loss.backward()
    dist.destroy_process_group()


def run_demo(demo_fn, world_size):
    torch_xla.launch(demo_fn,
             args=(world_size,))


if __name__ == "__main__":
    n_gpus = xla_launch_device_count()
    assert n_gpus >= 2, f"Requires at least 2 GPUs to run, but got {n_gpus}"
    world_size = n_gpus
    run_demo(demo_basic, world_size)
