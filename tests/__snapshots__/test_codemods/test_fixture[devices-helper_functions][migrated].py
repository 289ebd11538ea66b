"""Small device helpers real projects define: get_device() and to_device(batch, device="cuda"). [XLA101, XLA102, XLA105, XLA899]"""

import torch
import torch_xla


def get_device():
    """The GPU when there is one."""
    if bool(torch_xla.device_count()):
        return torch_xla.device()
    return torch.device("cpu")


def get_device_v2(gpu=True):
    return torch_xla.device() if gpu else torch.device("cpu")


def to_device(batch, device="xla"):
    """Move every tensor of a (possibly nested) batch to `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return [to_device(v, device) for v in batch]


def move(batch, *, target_device: str = "xla"):
    return to_device(batch, target_device)


def get_default_device():
    return "xla"


def pick_device(prefer_gpu=True):
    if prefer_gpu and bool(torch_xla.device_count()):
        return "xla"
    return "cpu"


def backend_name():
    # TODO(xla-migrate): XLA899 `"cuda"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    return "cuda"  # not a helper that names a device: flagged for a person
