"""An availability flag must not switch on what still needs CUDA: a legacy type used in a way
that cannot be converted leaves its flag False where it is set (the script runs on the CPU,
as without a GPU); a flag that guards DataParallel or a fused optimizer is False in that check
only; a device variable is the device of the converted factories.
[XLA101, XLA103, XLA105, XLA109, XLA110, XLA899]
"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

use_gpu = bool(torch_xla.device_count())
device = torch_xla.device()

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1)).to(device)
# TODO(xla-migrate): XLA110 `use_gpu` asks whether a GPU is there and guards `DataParallel`, which only CUDA has: this check of `use_gpu` is now `False`, so it stays off on XLA
if False:
    model = nn.DataParallel(model)
# TODO(xla-migrate): XLA110 `use_gpu` asks whether a GPU is there and is passed as `fused=`, which only CUDA has: `fused=False` here, so it stays off on XLA
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=False)
batch = torch.empty(8, 4, dtype=torch.float32, device=device).normal_()
target = batch.sum(1, keepdim=True).to(device, torch.float32)

# A second script in one file: its flag selects a type that is also checked with isinstance
# TODO(xla-migrate): XLA110 `cuda` asks whether a GPU is there and leads to `torch.cuda.ByteTensor if cuda else torch.ByteTensor` (`isinstance(x, ByteTensor)`), which still needs CUDA: `cuda` is now `False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand (`torch.empty/torch.tensor(..., dtype=..., device=torch_xla.device())`, `x.to(device, dtype)`) and restore the check
cuda = False
# TODO(xla-migrate): XLA899 `torch.cuda.ByteTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
ByteTensor = torch.cuda.ByteTensor if cuda else torch.ByteTensor
if cuda:
    model.to(torch_xla.device())


def is_mask(x):
    return isinstance(x, ByteTensor)


mask = ByteTensor(8).fill_(1)
# TODO(xla-migrate): XLA110 `torch.cuda.is_available()` asks whether a GPU is there and leads to `torch.cuda.IntTensor if torch.cuda.is_available() else to...` (`IntTensor.__name__`), which still needs CUDA: `torch.cuda.is_available()` is now `False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand (`torch.empty/torch.tensor(..., dtype=..., device=torch_xla.device())`, `x.to(device, dtype)`) and restore the check
# TODO(xla-migrate): XLA899 `torch.cuda.IntTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
IntTensor = torch.cuda.IntTensor if False else torch.IntTensor
counts = IntTensor(3).zero_()
print(IntTensor.__name__)


class Sampler:
    def __init__(self):
        # TODO(xla-migrate): XLA110 `torch.cuda.is_available()` asks whether a GPU is there and leads to `torch.cuda.FloatTensor`, which still needs CUDA: `torch.cuda.is_available()` is now `False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand (`torch.empty/torch.tensor(..., dtype=..., device=torch_xla.device())`, `x.to(device, dtype)`) and restore the check
        # TODO(xla-migrate): XLA899 `torch.cuda.FloatTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
        self.Tensor = torch.cuda.FloatTensor if False else torch.FloatTensor


class Options:
    no_cuda = False


opts = Options()
# TODO(xla-migrate): XLA110 `opts.cuda` asks whether a GPU is there and leads to `torch.cuda.LongTensor if opts.cuda else torch.LongTensor` (`print("labels are", LongTensor)`), which still needs CUDA: `opts.cuda` is now `False`, so what it selects runs on the CPU as on a machine without a GPU; convert it by hand (`torch.empty/torch.tensor(..., dtype=..., device=torch_xla.device())`, `x.to(device, dtype)`) and restore the check
opts.cuda = not opts.no_cuda and False
# TODO(xla-migrate): XLA899 `torch.cuda.LongTensor` is a legacy CUDA tensor type: create the tensor with its dtype (`torch.tensor(..., dtype=...)`) and move it with `.to(torch_xla.device())`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
LongTensor = torch.cuda.LongTensor if opts.cuda else torch.LongTensor
print("labels are", LongTensor)
