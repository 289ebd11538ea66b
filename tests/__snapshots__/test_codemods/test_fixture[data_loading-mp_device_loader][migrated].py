"""Training and evaluation loops that move each batch to the GPU, in the styles real projects use. [XLA101, XLA109, XLA201, XLA202, XLA302, XLA701]"""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm
import torch_xla
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()


# pytorch/examples mnist: enumerate, both tensors moved on one line, len(loader.dataset) kept
def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(pl.MpDeviceLoader(train_loader, device)):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if batch_idx % args.log_interval == 0:
            print(f"{epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] {loss.item():.6f}")


def test(model, device, test_loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in pl.MpDeviceLoader(test_loader, device):
            pred = model(data).argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return correct / len(test_loader.dataset)


# imagenet style: .cuda(non_blocking=True) on separate lines, a progress bar, a sampler per epoch
def train_epoch(train_loader, model, criterion, optimizer, epoch, args):
    train_loader.sampler.set_epoch(epoch)
    for i, (images, target) in enumerate(tqdm(pl.MpDeviceLoader(train_loader, torch_xla.device()), desc=f"epoch {epoch}")):
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()


# the PyTorch CIFAR-10 tutorial: the batch indexed, at module level
trainloader = DataLoader(trainset, batch_size=4, shuffle=True, num_workers=2)
for epoch in range(2):
    running_loss = 0.0
    for i, data in enumerate(pl.MpDeviceLoader(trainloader, device), 0):
        inputs, labels = data[0], data[1]
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        running_loss += loss.item()


# Hugging Face style: a dict batch moved by a comprehension
def fine_tune(model, train_dataloader, optimizer, lr_scheduler):
    model.train()
    for batch in pl.MpDeviceLoader(train_dataloader, device):
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        torch_xla.sync()
        lr_scheduler.step()
        optimizer.zero_grad()


# a Trainer class: the loader and the device on self, the batch unpacked in the body
class Trainer:
    def __init__(self, model, dataset, batch_size):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.train_data = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)

    def train_epoch(self):
        total = 0.0
        for step, batch in enumerate(pl.MpDeviceLoader(self.train_data, self.device)):
            features, labels = batch
            self.optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(self.model(features), labels)
            loss.backward()
            self.optimizer.step()
            torch_xla.sync()
            total += loss.detach()
        return total / len(self.train_data)

    def validate(self, val_loader):
        for features, labels in pl.MpDeviceLoader(val_loader, self.device):
            logits = self.model(features)
            yield (logits.argmax(-1) == labels).float().mean()
