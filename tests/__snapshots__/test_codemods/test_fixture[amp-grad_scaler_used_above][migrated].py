"""A scaler whose name says nothing, used in a function above the line that makes it. [XLA103, XLA109, XLA201, XLA401, XLA402, XLA404]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def train_step(model, batch, optimizer):
    loss = model(batch).mean()
    gs.scale(loss).backward()
    gs.step(optimizer)
    gs.update()
    torch_xla.sync()


model = torch.nn.Linear(4, 4).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# TODO(xla-migrate): XLA402 `gs` is used above the first line that names a GradScaler (`gs.scale(loss)`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
gs = torch.amp.GradScaler("xla")
for batch in torch.randn(3, 8, 4).to(torch_xla.device()):
    with torch.autocast("xla", dtype=torch.bfloat16):
        train_step(model, batch, optimizer)
