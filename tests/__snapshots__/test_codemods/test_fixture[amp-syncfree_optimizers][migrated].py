# fixture: unsafe-fixes
"""Where a GradScaler has to stay, the optimizers become the sync-free ones (unsafe). [XLA402, XLA404]"""

import torch
import torch.optim as optim
import torch_xla
from torch_xla.amp import syncfree


def build(model, config):
    # TODO(xla-migrate): XLA402 `scaler` is also used in a way xla-migrate does not convert (`return optimizer, scaler`), so it stays, on the XLA device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
    scaler = torch.amp.GradScaler("xla", init_scale=1024.0)
    if config.optimizer == "sgd":
        optimizer = syncfree.SGD(model.parameters(), lr=config.lr, momentum=0.9)
    elif config.optimizer == "adam":
        optimizer = syncfree.Adam(model.parameters(), lr=config.lr)
    elif config.optimizer == "adamw":
        optimizer = syncfree.AdamW(model.parameters(), lr=config.lr, weight_decay=0.05)
    else:
        optimizer = optim.RMSprop(model.parameters(), lr=config.lr)  # no sync-free variant
    return optimizer, scaler
