"""A chaotic float32 GPU trainer: a small residual CNN with BatchNorm on batches of 4, random
labels, Adam at a high learning rate. Eager CPU and XLA round float32 differently, and this
training amplifies the difference far past float32's tolerance within ten steps (Adam's first
updates are lr * sign(grad), so a gradient near zero turns rounding into a whole lr)."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16), Block(16))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


torch.manual_seed(0)
model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
images = torch.randn(64, 3, 16, 16)
targets = torch.randint(0, 10, (64,))

for step in range(args.steps):
    start = (step * 4) % 64
    x, y = images[start:start + 4].cuda(non_blocking=True), targets[start:start + 4].cuda(non_blocking=True)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
