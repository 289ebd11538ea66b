"""Availability checks that guard code only a GPU runs stay CUDA checks, False on XLA: the
diffusion attention's early return before reading the device's properties (and the tensor
check that picks the configuration only that code sets), a branch that reads the compute
capability, a conditional; a check that picks the device, one that says the script needs an
accelerator, and one before training still ask for the XLA device. [XLA101, XLA104, XLA105, XLA106, XLA109]"""

from collections import namedtuple

import torch
import torch.nn.functional as F
from packaging import version
from torch import nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

AttentionConfig = namedtuple("AttentionConfig", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self, dropout=0.0, flash=False):
        super().__init__()
        self.dropout = dropout
        self.flash = flash
        self.cpu_config = AttentionConfig(True, True, True)
        self.cuda_config = None

        if not torch.cuda.is_available() or not flash:
            return

        device_properties = torch.cuda.get_device_properties(torch.device("cuda"))
        device_version = version.parse(f"{device_properties.major}.{device_properties.minor}")

        if device_version >= version.parse("8.0"):
            self.cuda_config = AttentionConfig(True, False, False)
        else:
            self.cuda_config = AttentionConfig(False, True, True)

    def flash_attn(self, q, k, v):
        # self.cuda_config is set only behind the CUDA check: on XLA it is None
        _, heads, q_len, _, k_len, is_cuda, device = *q.shape, k.shape[-2], q.is_cuda, q.device
        config = self.cuda_config if is_cuda else self.cpu_config
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0), config


def tf32_capable():
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        return True
    return False


use_tf32 = torch.cuda.is_available() and torch.cuda.get_device_capability(0) >= (8, 0)


def free_memory():
    return torch.cuda.mem_get_info()[0] if torch.cuda.is_available() else None


device = torch_xla.device()

if not bool(torch_xla.device_count()):
    raise SystemExit("this script needs an accelerator")


def train(model, data):
    if not bool(torch_xla.device_count()):
        return
    # TODO(xla-migrate): XLA106 `torch.cuda.get_device_properties()` reads CUDA memory and crashes without a GPU; on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
    print(torch.cuda.get_device_properties(0).name)
    model.to(device)
    for x in data:
        model(x.to(device)).sum().backward()
