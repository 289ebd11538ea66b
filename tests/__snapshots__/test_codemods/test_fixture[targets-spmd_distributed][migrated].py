# fixture: target=spmd
"""A DDP script under --target spmd: flagged, not rewritten into something broken. [XLA601, XLA602, XLA603, XLA605, XLA672]"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla
import torch_xla.distributed.xla_backend


def worker(rank, world_size):
    # TODO(xla-migrate): XLA672 `torch.distributed.init_process_group` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    dist.init_process_group("xla", init_method="xla://")
    # TODO(xla-migrate): XLA672 `torch.nn.parallel.DistributedDataParallel` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    model = DDP(torch.nn.Linear(2, 2).to(torch_xla.device()), gradient_as_bucket_view=True)
    loss = model(torch.randn(4, 2).to(torch_xla.device())).sum()
    loss.backward()


if __name__ == "__main__":
    # TODO(xla-migrate): XLA672 `torch.multiprocessing.spawn` under `--target spmd`: SPMD runs one process that drives every device and cannot be mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the batch instead (https://docs.pytorch.org/xla/master/perf/spmd_basic.html), or migrate with `--target multiprocess`
    torch_xla.launch(worker, args=(2,))
