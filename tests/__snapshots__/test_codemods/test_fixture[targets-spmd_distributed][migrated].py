# fixture: target=spmd
"""A DDP script under --target spmd: flagged, not rewritten into something broken."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size):
    # TODO(xla-migrate): XLA672 `torch.distributed.init_process_group` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    # TODO(xla-migrate): XLA672 `torch.nn.parallel.DistributedDataParallel` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    model = DDP(torch.nn.Linear(2, 2).to(rank), device_ids=[rank])
    loss = model(torch.randn(4, 2).to(rank)).sum()
    loss.backward()


if __name__ == "__main__":
    # TODO(xla-migrate): XLA672 `torch.multiprocessing.spawn` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    mp.spawn(worker, args=(2,), nprocs=2)
