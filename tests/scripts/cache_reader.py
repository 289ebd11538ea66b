"""A GPU trainer that runs as written and fails only in verify's float64 mode.

It caches its features with torch and reads the cache back as raw float32, as a
memory-mapped dataset does: in float64 mode torch wrote float64, twice the bytes, and the
reshape fails ("cannot reshape array of size 512 into shape (64,4)"). The failure is the
instrument's, not the script's: verify runs both again without float64 and says so.
"""

import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
cache = os.path.join(tempfile.mkdtemp(), "features.bin")
torch.randn(64, 4).numpy().tofile(cache)
raw = np.fromfile(cache, np.float32)
features = torch.from_numpy(raw.reshape(64, 4))
model = nn.Linear(4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(8):
    x = features[step * 8 : step * 8 + 8].cuda()
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
