# fixture: runtime=torch-tpu
"""TorchTPU: checks for CUDA tensors and devices check for the TPU (t.is_tpu, device.type == "tpu"),
a check guarding a stream too (torch.tpu has streams); one guarding a fused optimizer or
DataParallel stays a CUDA check. [XLA104]"""

import torch
import torch.nn as nn


def describe(t: torch.Tensor, device: torch.device):
    if t.is_tpu:
        print("tensor on the accelerator")
    if device.type == "tpu":
        print("accelerator run")
    if "tpu" in str(device):
        print("accelerator name")
    if device.type != 'tpu':
        return t.cpu()
    return t


def copy_side_stream(x, device):
    use_side_stream = device.type == "tpu"
    if x.is_tpu:
        s = torch.Stream()
        with s:
            x = x * 2
    return x, use_side_stream


def build(model, params, device_type):
    use_fused = device_type == "cuda"
    optimizer = torch.optim.AdamW(params, fused=use_fused)
    if next(model.parameters()).is_cuda:
        model = nn.DataParallel(model)
    return model, optimizer
