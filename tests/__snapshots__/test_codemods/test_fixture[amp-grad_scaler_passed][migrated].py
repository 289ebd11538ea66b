"""A GradScaler made in main() and handed to the training functions of the same file. [XLA201, XLA401, XLA402, XLA501]"""

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm


def train_one_epoch(model, loader, optimizer, epoch, *, clip=None):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        torch_xla.sync()


def save(path, model, optimizer):
    xm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


def main(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer, epoch)
        save(f"epoch{epoch}.pt", model, optimizer)
    train_one_epoch(
        model,
        loader,
        optimizer,
        epoch=epochs,
        clip=1.0,
    )
