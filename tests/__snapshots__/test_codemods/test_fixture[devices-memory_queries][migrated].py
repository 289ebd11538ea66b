"""CUDA memory statistics logged during training: flagged, since XLA has no drop-in counterpart. [XLA106]"""

import torch


def log_memory(step):
    # TODO(xla-migrate): XLA106 `torch.cuda.memory_allocated()` reads CUDA memory; on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
    allocated = torch.cuda.memory_allocated() / 2**20
    # TODO(xla-migrate): XLA106 `torch.cuda.max_memory_allocated()` reads CUDA memory; on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"step {step}: {allocated:.1f} MiB allocated, {peak:.1f} MiB peak")


def report():
    # TODO(xla-migrate): XLA106 `torch.cuda.get_device_properties()` reads CUDA memory and crashes without a GPU; on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
    props = torch.cuda.get_device_properties(0)
    # TODO(xla-migrate): XLA106 `torch.cuda.memory_summary()` reads CUDA memory and crashes without a GPU; on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
    print(props.total_memory, torch.cuda.memory_summary())
