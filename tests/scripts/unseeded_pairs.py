"""A GPU script that never seeds: its model starts from torch's unseeded generator and its
batches are drawn with Python's random and NumPy, as many public training scripts do."""

import random
import sys

import numpy as np
import torch
import torch.nn as nn

if "--seed-random" in sys.argv:  # seeds only Python's random (then derives torch's seed from it)
    random.seed(1234)
    torch.manual_seed(random.randint(1, 10000))

data = np.random.randn(256, 6).astype(np.float32)
labels = (data[:, :3].sum(axis=1) > data[:, 3:].sum(axis=1)).astype(np.int64)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for step in range(20):
    index = random.sample(range(len(data)), 16)
    x = torch.from_numpy(data[index]).to(device)
    y = torch.from_numpy(labels[index]).to(device)
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
