"""A training script that logs GPU memory with the nvidia-smi command. [XLA809]"""

import os
import subprocess

# TODO(xla-migrate): XLA809 `nvidia-smi` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
os.system("nvidia-smi")
# TODO(xla-migrate): XLA809 `nvidia-smi` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
usage = subprocess.check_output(
    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader"], text=True
)
# TODO(xla-migrate): XLA809 `nvidia-smi` queries NVIDIA GPUs through NVML, which a TPU VM does not have: read memory with `xm.get_memory_info(device)` and compile / execution counts with `torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html
subprocess.run("nvidia-smi -L", shell=True, check=True)
print("nvidia-smi reported", usage)
os.system("nvidia-smi-wrapper --help")
