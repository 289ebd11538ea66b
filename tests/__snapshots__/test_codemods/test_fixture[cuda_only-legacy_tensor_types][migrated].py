"""Legacy CUDA tensor types from old scripts: torch.cuda.FloatTensor and friends. [XLA110, XLA899]"""

import torch
import torch_xla

x = torch.empty(4, 4, dtype=torch.float32, device=torch_xla.device()).fill_(0)
labels = torch.tensor([1, 2, 3], dtype=torch.int64, device=torch_xla.device())
y = torch.randn(4, 4).to(torch_xla.device(), torch.float32)
# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
if isinstance(y, torch.cuda.FloatTensor):
    print("on the GPU")
# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.set_default_tensor_type(torch.cuda.FloatTensor)
