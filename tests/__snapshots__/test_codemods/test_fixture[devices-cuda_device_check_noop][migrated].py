"""Device checks that already look for XLA or the CPU, and "cuda"-like names that are no device."""

import torch


def describe(t: torch.Tensor, device: torch.device) -> str:
    if t.is_xla:  # was t.is_cuda before the migration
        return "xla tensor"
    if device.type == "xla":
        return "xla device"
    if device.type == "cpu" or t.is_cpu:
        return "cpu"
    if "xla" in str(device):
        return "xla by name"
    return device.type


def compile_model(model, backend: str):
    if backend == "cudagraphs":  # a torch.compile backend name, not a device
        return model
    return torch.compile(model, backend=backend)
