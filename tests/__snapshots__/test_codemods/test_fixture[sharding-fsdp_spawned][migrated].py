"""PyTorch's FSDP tutorial shape: ``mp.spawn`` starts a worker per GPU that joins the group and
wraps its model. One SPMD program cannot be one of several processes: the sharding rules
leave the file to the distributed ones, and FSDP stays flagged. [XLA601, XLA602, XLA605, XLA608]"""

import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from model import Net
import torch_xla
import torch_xla.distributed.xla_backend


def fsdp_main(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    dist.init_process_group("xla", init_method="xla://")
    # TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see https://docs.pytorch.org/xla/master/perf/fsdp.html
    model = FSDP(Net().to(torch_xla.device()))
    dist.destroy_process_group()


if __name__ == "__main__":
    # torchrun is not needed: mp.spawn starts the workers
    torch_xla.launch(fsdp_main, args=(8,))
