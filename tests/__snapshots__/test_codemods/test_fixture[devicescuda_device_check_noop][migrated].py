"""Device checks that already look for XLA or the CPU."""

import torch


def describe(t: torch.Tensor, device: torch.device) -> str:
    if t.is_xla:
        return "xla tensor"
    if device.type == "xla":
        return "xla device"
    if device.type == "cpu" or t.is_cpu:
        return "cpu"
    if "xla" in str(device):
        return "xla by name"
    return device.type
