"""Suppression comments: a line's noqa comment silences the codes it names on its statement
(every line of a simple statement, the header of a compound one but not its body), a bare one
every code there, a file's comment a code in the whole file; a code that silences nothing is
reported (XLA002), other tools' codes are left alone. [XLA002, XLA101, XLA109, XLA201, XLA302]"""
# xla-migrate: noqa: XLA8
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import torch_xla
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
model = nn.Linear(8, 2).cuda()  # noqa: XLA103 (kept on purpose: a person checked it)
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(range(32), batch_size=4)

for x in loader:  # noqa: XLA302
    x = x.to(device)
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    torch_xla.sync()

for x in pl.MpDeviceLoader(loader, device):
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()  # noqa

torch.cuda.synchronize()  # noqa: XLA105, E501
print(loss.item())  # noqa: XLA2, XLA7
