"""Legacy CUDA tensor types from old scripts: torch.cuda.FloatTensor and friends. [XLA899]"""

import torch

# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
dtype = torch.cuda.FloatTensor
# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
x = torch.cuda.FloatTensor(4, 4).fill_(0)
# TODO(xla-migrate): XLA899 `torch.cuda.LongTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
labels = torch.cuda.LongTensor([1, 2, 3])
y = torch.randn(4, 4).type(dtype)
# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
if isinstance(y, torch.cuda.FloatTensor):
    print("on the GPU")
# TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.set_default_tensor_type(torch.cuda.FloatTensor)
