"""DataLoader pin_memory in keyword arguments, kwargs dicts and calls spread over several lines. [XLA105, XLA301, XLA701]"""

import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla

use_cuda = bool(torch_xla.device_count())
dataset = TensorDataset(torch.randn(100, 8), torch.randint(0, 2, (100,)))

train_loader = DataLoader(dataset, batch_size=16, shuffle=True)
val_loader = DataLoader(dataset, batch_size=32, drop_last=False)
test_loader = DataLoader(
    dataset,
    batch_size=64,
    num_workers=2,
)
eval_loader = DataLoader(
    dataset,
    batch_size=8,
)

train_kwargs = {"batch_size": 16}
cuda_kwargs = {"num_workers": 1, "shuffle": True}
loader_kwargs = {
    "num_workers": 4,
}
if use_cuda:
    train_kwargs.update(cuda_kwargs)
loader = DataLoader(dataset, **train_kwargs, **loader_kwargs)
options = dict(batch_size=4)
gpu_loader = DataLoader(dataset, batch_size=8)
device_loader = DataLoader(dataset, batch_size=8)
