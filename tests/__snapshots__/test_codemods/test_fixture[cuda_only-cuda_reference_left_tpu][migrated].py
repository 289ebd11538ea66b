# fixture: runtime=torch-tpu
"""Under TorchTPU: what no rule converted is flagged with TorchTPU's counterpart, and a torch.cuda
name that torch.tpu does not have says so. [XLA899]"""

import os

import torch

# TODO(xla-migrate): XLA899 `torch.cuda.graph_pool_handle` is not in `torch.tpu`, which mirrors only part of `torch.cuda` (no memory statistics, no CUDA graphs): remove it or find its TorchTPU equivalent; see https://pypi.org/project/torch-tpu/
pool = torch.cuda.graph_pool_handle()
# TODO(xla-migrate): XLA899 `torch.cuda.get_arch_list` is not in `torch.tpu`, which mirrors only part of `torch.cuda` (no memory statistics, no CUDA graphs): remove it or find its TorchTPU equivalent; see https://pypi.org/project/torch-tpu/
print(torch.cuda.get_arch_list())
# TODO(xla-migrate): XLA899 `"cuda"` names a CUDA device: on TorchTPU use `torch.device("tpu")` (or `"tpu"`), and load checkpoints with `map_location="cpu"`; see https://pypi.org/project/torch-tpu/
os.environ["ACCELERATOR"] = "cuda"
print("training on", "cuda")  # a message, not a device
