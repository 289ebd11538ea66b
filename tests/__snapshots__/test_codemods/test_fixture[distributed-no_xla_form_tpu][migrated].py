# fixture: runtime=torch-tpu
"""FSDP, DTensor, pipelines and RPC under TorchTPU, flagged with what must name its device; a torchrun
line, with the TPU launch environment it needs:

    torchrun --nproc_per_node=8 train.py

[XLA608, XLA609]"""

import torch.distributed.rpc as rpc
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module


def shard(model, world_size):
    # TODO(xla-migrate): XLA608 `init_device_mesh` is `torch.distributed.device_mesh`: build a mesh of the `"tpu"` device type (`init_device_mesh("tpu", ...)`; `torch.tpu.topology_aware_mesh` lays the ranks out along the chips' links)
    mesh = init_device_mesh("tpu", (world_size,))
    # TODO(xla-migrate): XLA608 `parallelize_module` is `torch.distributed.tensor`: DTensor runs on TorchTPU's device: build a mesh of the `"tpu"` device type (`init_device_mesh("tpu", ...)`; `torch.tpu.topology_aware_mesh` lays the ranks out along the chips' links)
    model = parallelize_module(model, mesh, {"fc": ColwiseParallel()})
    # TODO(xla-migrate): XLA608 `fully_shard` is `torch.distributed.fsdp`: under TorchTPU it shards over the `"tpu"` process group on the `tpu` device: place the module on `torch.device("tpu")` and build a mesh of the `"tpu"` device type (`init_device_mesh("tpu", ...)`; `torch.tpu.topology_aware_mesh` lays the ranks out along the chips' links); TorchTPU is beta, so check the sharded run on a TPU
    fully_shard(model)
    return model


def remote(name, rank, world_size):
    # TODO(xla-migrate): XLA608 `rpc.init_rpc` is `torch.distributed.rpc`: moves tensors between workers with CUDA device maps, and TorchTPU gives its device no RPC transport: restructure as data parallelism (DDP over the `"tpu"` process group) or DTensor sharding
    rpc.init_rpc(name, rank=rank, world_size=world_size)
