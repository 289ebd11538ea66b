"""Scalers that are no CUDA GradScaler: CPU loss scaling, and scikit-learn's feature scaler."""

import torch
from sklearn.preprocessing import StandardScaler

scaler = StandardScaler()
features = scaler.fit_transform([[1.0, 2.0], [3.0, 4.0]])
scaler.partial_fit([[5.0, 6.0]])

model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
cpu_scaler = torch.amp.GradScaler("cpu")
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = model(torch.tensor(features, dtype=torch.float32)).sum()
cpu_scaler.scale(loss).backward()
cpu_scaler.step(optimizer)
cpu_scaler.update()
