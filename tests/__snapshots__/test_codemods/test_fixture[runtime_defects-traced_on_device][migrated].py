"""A CNN's graph logged to TensorBoard before it trains, a tuple of inputs for a second model,
and a model traced with torch.jit.trace to save it: add_graph gets CPU copies; the trace is
flagged. [XLA101, XLA109, XLA201, XLA903]"""

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter
import copy
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2)).to(device)
pair = nn.Bilinear(4, 4, 2).to(device)
writer = SummaryWriter("runs/cnn")
images = torch.randn(4, 1, 16, 16)
writer.add_graph(copy.deepcopy(model).cpu(), images.to(device).cpu())
writer.add_graph(copy.deepcopy(pair).cpu(), input_to_model=(torch.randn(2, 4, device=device).cpu(), torch.randn(2, 4, device=device).cpu()))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    loss = model(images.to(device)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
# TODO(xla-migrate): XLA903 `torch.jit.trace(model, images.to(device))`: torch.jit.trace of a model on the XLA device fails at its first convolution on torch_xla 2.9 ("Cannot insert a Tensor that requires grad as a constant"; linear, normalisation, LSTM and embedding layers trace; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md); trace a CPU copy (`copy.deepcopy(model).cpu()` with CPU inputs), or use torch.export / torch.compile
scripted = torch.jit.trace(model, images.to(device))
scripted.save("cnn.pt")
