"""A CPU-only script that moves its batches to the CPU device: nothing here is for CUDA or XLA."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def embed_all(model: nn.Module, loader: DataLoader, device=torch.device("cpu")):
    model.to(device).eval()
    outputs = []
    for x, _ in loader:
        x = x.to(device)
        outputs.append(model(x).detach())
    return torch.cat(outputs)


if __name__ == "__main__":
    torch.set_num_threads(4)
    data = TensorDataset(torch.randn(64, 8), torch.zeros(64))
    print(embed_all(nn.Linear(8, 4), DataLoader(data, batch_size=16)).shape)
