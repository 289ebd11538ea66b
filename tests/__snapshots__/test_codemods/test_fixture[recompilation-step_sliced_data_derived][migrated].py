# fixture: unsafe-fixes
"""Bounds the loop computes from its counter before slicing (start = batch; end = start + size),
as a temporal-convolution trainer does: the slice by them is flagged and indexed with device
positions. [XLA103, XLA109, XLA201, XLA706]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

train_x = torch.randn(1000, 8).to(torch_xla.device())
model = torch.nn.Linear(8, 1).to(torch_xla.device())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch_size = 32
for batch_idx, batch in enumerate(range(0, 1000, batch_size)):
    start_ind = batch
    end_ind = start_ind + batch_size
    x = train_x.index_select(0, torch.arange(start_ind, min(end_ind, len(train_x))).to(train_x.device))
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch_xla.sync()
