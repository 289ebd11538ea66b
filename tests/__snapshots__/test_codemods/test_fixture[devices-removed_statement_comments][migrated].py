"""Comments of removed statements: the comment lines directly above a statement a fix removes
are about it and go with it (as its trailing comment does); a comment with a blank line under
it, about a section, stays, and so do the comments of the statements that stay. [XLA103, XLA105, XLA107, XLA109, XLA201, XLA302, XLA401, XLA402]"""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

# -- set-up --

model = torch.nn.Linear(8, 2).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# -- training --

for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
    with torch.autocast("xla", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    # scale the loss, then step
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    optimizer.zero_grad()


def cleanup():
    pass
