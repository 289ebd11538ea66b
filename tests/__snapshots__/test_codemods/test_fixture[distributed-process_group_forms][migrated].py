"""Process groups as scripts create them: positional, keyword, flags, variables and aliases. [XLA602]"""

import argparse

import torch


import torch.distributed as dist
from torch.distributed import init_process_group
import torch_xla.distributed.xla_backend

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="xla", type=str, help="distributed backend")
parser.add_argument("--dist-url", default="env://", type=str)
args = parser.parse_args()

backend = "xla"


def setup(rank, world_size, backend="xla"):
    dist.init_process_group("xla", init_method="xla://")


def imagenet_style(args, gpu, ngpus_per_node):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group(backend="xla", init_method="xla://")


def default_backend():
    init_process_group("xla", init_method="xla://")


def with_device_id(local_rank):
    init_process_group(backend="xla", init_method="xla://")


def cpu_group():
    return dist.new_group(backend="gloo")


def accelerator_group(device):
    # PyTorch's examples: the backend torch picks for the device
    backend = "xla"
    torch.distributed.init_process_group(backend="xla", init_method="xla://")
