"""Data sets and masks made on the device and filled element by element in a loop (a course
notebook's spiral, padding masks, a grid): made on the host, moved once after the loop; a
device given as a string is flagged. [XLA101, XLA102, XLA103, XLA205]"""

import math

import torch
import torch_xla

device = torch_xla.device()
N, C, D = 1000, 3, 2

X = torch.zeros(N * C, D)
y = torch.zeros(N * C, dtype=torch.long)
for c in range(C):
    t = torch.linspace(0, 1, N)
    angle = torch.linspace(2 * math.pi * c / C, 2 * math.pi * (c + 2) / C, N) + torch.randn(N) * 0.2
    for i in range(N):
        X[N * c + i] = t[i] * torch.tensor((math.sin(angle[i]), math.cos(angle[i])))
        y[N * c + i] = c
X = X.to(device)
y = y.to(device)

print("X:", tuple(X.size()), "y:", tuple(y.size()))


def padding_mask(lengths, width):
    mask = torch.zeros(len(lengths), width, dtype=torch.bool)
    for row, length in enumerate(lengths):
        mask[row, :length] = True
    mask = mask.to(device)
    return mask


grid = torch.empty(8, 8)
for r in range(8):
    for col in range(8):
        grid[r, col] = r * 8 + col
grid = grid.to(torch_xla.device())

labels = torch.full((N,), -1)
for i in range(0, N, 2):
    labels[i] = i % C
labels = labels.to("xla")
