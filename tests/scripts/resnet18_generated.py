"""A ResNet-18 trainer on generated data, as the ImageNet example's --dummy mode: a batch
of random images and labels made once, SGD with momentum, on a GPU."""

import argparse

import torch
import torch.nn as nn
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--image-size", type=int, default=224)
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
images = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
targets = torch.randint(0, 100, (args.batch_size,))
model.train()
for step in range(args.steps):
    x, y = images.to(device), targets.to(device)
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
