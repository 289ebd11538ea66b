"""Checks that guard a CPU path: nothing in them names CUDA, so nothing changes."""

from contextlib import nullcontext

import torch


def setup(device_type, dtype):
    if device_type == "cpu":
        torch.set_num_threads(8)  # the CPU path: more intra-op threads
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.autocast(device_type=device_type, dtype=ptdtype)
    return ctx


def to_numpy(t: torch.Tensor):
    if t.device.type == "cpu":
        return t.numpy()
    return t.detach().cpu().numpy()
