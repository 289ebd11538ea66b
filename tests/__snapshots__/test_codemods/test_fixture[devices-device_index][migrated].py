"""Per-process device indices: torch.device("cuda", local_rank), f"cuda:{rank}", type=/index= keywords. [XLA101, XLA102, XLA105, XLA604, XLA899]"""

import os

import torch
import torch_xla
import torch_xla.runtime as xr


def setup(rank: int):
    local_rank = xr.local_ordinal()
    device = torch_xla.device()
    other = torch_xla.device()
    first = torch_xla.device()
    return device, other, first


def batch_on(rank, batch):
    return batch.to("xla")


def current():
    return torch_xla.device()


def formatted(args, rank):
    # Older scripts format the index into the name.
    device = torch_xla.device()
    by_percent = torch_xla.device()
    with_spec = torch_xla.device()  # hifi-gan's
    # TODO(xla-migrate): XLA899 `"cuda:"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    loc = "cuda:" + str(rank)
    return device, by_percent, with_spec, torch.load("ckpt.pt", map_location=loc)
