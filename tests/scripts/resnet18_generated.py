"""A ResNet-18 trainer on generated data, as the ImageNet example's --dummy mode: a batch
of random images and labels made once, SGD with momentum, on a GPU. The network is
written out (the layers of torchvision's resnet18) so that the script needs torch alone."""

import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--image-size", type=int, default=224)
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
        )
        layers, inplanes = [], 64
        for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes)]
            inplanes = planes
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = ResNet18(num_classes=100).to(device)
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
