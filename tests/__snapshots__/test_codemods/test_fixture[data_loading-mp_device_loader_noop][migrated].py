"""Loops whose batches must not come from an MpDeviceLoader, or already do."""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.nn.utils.rnn import pack_padded_sequence

device = torch_xla.device()


def lengths_stay_on_the_cpu(model, train_loader):
    for tokens, labels, lengths in train_loader:
        tokens, labels = tokens.to(device), labels.to(device)
        packed = pack_padded_sequence(model.embed(tokens), lengths, batch_first=True)


def read_on_the_cpu_first(model, train_loader):
    for images, labels in train_loader:
        print(images.numpy().mean())
        images, labels = images.to(device), labels.to(device)


def moved_and_converted(model, train_loader):
    for images, labels in train_loader:
        images = images.to(device, torch.bfloat16)
        labels = labels.to(device)


def moved_under_a_condition(model, train_loader, on_device):
    for images, labels in train_loader:
        if on_device:
            images = images.to(device)
        labels = labels.to(device)


def two_devices(model, train_loader, other_device):
    for images, labels in train_loader:
        images = images.to(device)
        labels = labels.to(other_device)


def device_chosen_in_the_loop(model, train_loader, devices):
    for step, (images, labels) in enumerate(train_loader):
        device = devices[step % 2]
        images, labels = images.to(device), labels.to(device)


def batch_kept_after_the_loop(model, val_loader):
    for images, labels in val_loader:
        inputs, targets = images.to(device), labels.to(device)
    return images.shape


def batch_read_in_the_next_epoch(model, train_loader):
    for epoch in range(3):
        if epoch:
            print(images.sum())
        for images, labels in train_loader:
            inputs, targets = images.to(device), labels.to(device)


def not_a_loader(model, inputs, targets):
    for x, y in zip(inputs, targets):
        x, y = x.to(device), y.to(device)


def nothing_moved(model, val_loader):
    for images, labels in val_loader:
        model(images)


def already_an_mp_device_loader(model, train_loader):
    device_loader = pl.MpDeviceLoader(train_loader, device)
    for images, labels in device_loader:
        images = images.to(device)
    for images, labels in pl.MpDeviceLoader(train_loader, device):
        labels = labels.to(device)
