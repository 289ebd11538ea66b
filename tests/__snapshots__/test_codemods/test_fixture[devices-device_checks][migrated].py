"""Branches on where a tensor lives: t.is_cuda, device.type == "cuda", "cuda" in str(device). [XLA104, XLA105]"""

import torch
import torch_xla


def maybe_sync(t: torch.Tensor, device: torch.device):
    if t.is_xla:
        print("tensor on the GPU")
    if device.type == "xla":
        torch_xla.sync(wait=True)
    if "xla" in str(device):
        print("GPU run")
    if device.type != 'xla':
        return t.cpu()
    return t


def amp_enabled(device):
    return device.type == "xla"


def ones_beside(input):
    # the device string the check picks follows it (pyGAT's sparse layer)
    dv = "xla" if input.is_xla else "cpu"
    return torch.ones(input.shape[0], device=dv)
