"""A retry that catches CUDA's out-of-memory error: on XLA the operations only trace and an
out-of-memory error comes as a RuntimeError when the graph runs, so the handler is flagged
above its `try:`. [XLA103, XLA109, XLA201, XLA899]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1)).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batch = 64
for step in range(10):
    x = torch.randn(batch, 32).to(torch_xla.device())
    # TODO(xla-migrate): XLA899 `torch.cuda.OutOfMemoryError` is CUDA's out-of-memory error, raised by the operation that allocates: on XLA the operations only trace, and running out of device memory raises a RuntimeError whose message says RESOURCE_EXHAUSTED when the step's graph runs (at `torch_xla.sync()` or a value read such as `.item()`): catch that around the sync; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    try:
        loss = model(x).pow(2).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        batch //= 2
        continue
    optimizer.step()
    torch_xla.sync()
