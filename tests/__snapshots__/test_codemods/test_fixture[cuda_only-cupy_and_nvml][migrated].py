"""CuPy arrays and NVML monitoring in a training script. [XLA808, XLA809]"""

import cupy as cp
import GPUtil
import pynvml
import torch

# TODO(xla-migrate): XLA808 `cp.asarray` is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the XLA device, or NumPy on the host; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
weights = cp.asarray([0.1, 0.2, 0.7])
# TODO(xla-migrate): XLA808 `cp.asnumpy` is CuPy, whose arrays and kernels live on an NVIDIA GPU: use torch ops on the XLA device, or NumPy on the host; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
tensor = torch.as_tensor(cp.asnumpy(weights))

# TODO(xla-migrate): XLA809 `pynvml.nvmlInit` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
pynvml.nvmlInit()
# TODO(xla-migrate): XLA809 `pynvml.nvmlDeviceGetHandleByIndex` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
# TODO(xla-migrate): XLA809 `pynvml.nvmlDeviceGetMemoryInfo` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
used = pynvml.nvmlDeviceGetMemoryInfo(handle).used
print(f"GPU memory used: {used / 2**20:.0f} MiB")
# TODO(xla-migrate): XLA809 `GPUtil.getGPUs` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
for gpu in GPUtil.getGPUs():
    print(gpu.load)
