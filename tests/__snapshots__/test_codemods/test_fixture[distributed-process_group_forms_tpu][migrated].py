# fixture: runtime=torch-tpu
"""Process groups under TorchTPU: NCCL becomes its "tpu" backend, as a literal, a flag, a variable or
a default; the rendezvous, rank and world size stay; gloo and a default group stay. [XLA602]"""

import argparse

import torch
import torch.distributed as dist
from torch.distributed import init_process_group

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="tpu", type=str, help="distributed backend")
parser.add_argument("--dist-url", default="env://", type=str)
args = parser.parse_args()

backend = "tpu"


def setup(rank, world_size, backend="tpu"):
    dist.init_process_group("tpu", rank=rank, world_size=world_size)


def imagenet_style(args, gpu, ngpus_per_node):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group(backend="tpu", init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank)


def per_device(store, rank, world_size):
    init_process_group("tpu:tpu,cpu:gloo", store=store, rank=rank, world_size=world_size)


def default_backend():
    init_process_group()


def cpu_group():
    return dist.new_group(backend="gloo")


def accelerator_group(device):
    # PyTorch's examples: the backend torch picks for the device
    backend = torch.distributed.get_default_backend_for_device(device)
    torch.distributed.init_process_group(backend="tpu", device_id=device)
