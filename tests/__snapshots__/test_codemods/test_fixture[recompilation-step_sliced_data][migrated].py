# fixture: unsafe-fixes
"""A density model trained on a data set moved to the device once and sliced by the step, through
an alias chosen by the split: the slice becomes an index_select with positions moved to the
device, so every step runs one graph. [XLA103, XLA201, XLA706]"""

import numpy as np
import torch
import torch_xla

data = np.random.rand(1000, 16).astype(np.float32)
xtr = torch.from_numpy(data[:800]).to(torch_xla.device())
xte = torch.from_numpy(data[800:]).to(torch_xla.device())
model = torch.nn.Linear(16, 16)
opt = torch.optim.Adam(model.parameters())


def run_epoch(split, B=100):
    x = xtr if split == "train" else xte
    for step in range(len(x) // B):
        xb = x.index_select(0, torch.arange(step * B, min(step * B + B, len(x))).to(x.device))
        loss = (model(xb) - xb).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch_xla.sync()
