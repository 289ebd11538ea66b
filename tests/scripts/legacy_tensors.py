"""A GPU script written with the legacy typed tensors (PyTorch-GAN style):
``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``, ``Tensor(batch, 1)``,
``Tensor(ndarray)``, ``torch.cuda.LongTensor(...)``, ``x.type(torch.cuda.FloatTensor)``."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor
torch.manual_seed(0)
np.random.seed(0)
batch, latent, classes = 8, 6, 3
model = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, classes + 1))
if cuda:
    model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(50):
    z = Tensor(np.random.normal(0, 1, (batch, latent)))
    labels = torch.cuda.LongTensor(np.random.randint(0, classes, batch).tolist())
    valid = Tensor(batch, 1).fill_(1.0)
    weights = torch.ones(batch).type(torch.cuda.FloatTensor).type("torch.cuda.FloatTensor")
    assert isinstance(z, torch.cuda.FloatTensor)
    optimizer.zero_grad()
    out = model(z)
    loss = (F.cross_entropy(out[:, :classes], labels, reduction="none") * weights).mean()
    loss = loss + F.binary_cross_entropy_with_logits(out[:, classes:], valid)
    loss.backward()
    optimizer.step()
