"""A classification recipe as torchvision's reference trains it, small: a residual CNN with
BatchNorm, SGD with Nesterov momentum at a high learning rate, label smoothing, mixup or cutmix
on every batch, an exponential moving average of the weights, float16 autocast with a GradScaler.
Rounding (float16 against bfloat16, eager against XLA) grows fast in such a training: the
tolerance a twin calibrates passes any bound within a few steps."""

import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.4)
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--batch-size", type=int, default=8)
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
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16), Block(16))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1))


def mix(x, y, classes=10):
    """Mixup or cutmix, one each batch, as torchvision's RandomMixup / RandomCutmix."""
    target = F.one_hot(y, classes).float()
    lam = float(np.random.beta(1.0, 1.0))
    perm = torch.randperm(x.size(0), device=x.device)
    if np.random.rand() < 0.5:
        x = lam * x + (1 - lam) * x[perm]
    else:
        h, w = x.shape[-2:]
        cy, cx = np.random.randint(h), np.random.randint(w)
        r = np.sqrt(1 - lam)
        y0, y1 = max(cy - int(r * h / 2), 0), min(cy + int(r * h / 2), h)
        x0, x1 = max(cx - int(r * w / 2), 0), min(cx + int(r * w / 2), w)
        x = x.clone()
        x[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
        lam = 1 - (y1 - y0) * (x1 - x0) / (h * w)
    return x, lam * target + (1 - lam) * target[perm]


torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda")
model = Net().to(device)
ema = copy.deepcopy(model)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=5e-5)
scaler = torch.cuda.amp.GradScaler()
images = torch.randn(128, 3, 16, 16)
labels = torch.randint(0, 10, (128,))

for step in range(args.steps):
    start = (step * args.batch_size) % 128
    x = images[start : start + args.batch_size].to(device)
    y = labels[start : start + args.batch_size].to(device)
    x, soft = mix(x, y)
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = criterion(model(x), soft)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(0.99).add_(p, alpha=0.01)
