"""Pre-0.4 typed tensors, as much-copied GAN code writes them: a flag asks whether a GPU is
there, a legacy type is chosen on it, tensors are built from sizes and numpy arrays and cast
with .type(). Each use becomes a factory with the type's dtype on the XLA device.
[XLA103, XLA105, XLA109, XLA110]
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--latent_dim", type=int, default=8)
opt = parser.parse_args()

cuda = True if bool(torch_xla.device_count()) else False

model = nn.Linear(opt.latent_dim, 1)
if cuda:
    model.to(torch_xla.device())


def sample(n, labels):
    z = Variable(torch.tensor(np.random.normal(0, 1, (n, opt.latent_dim)), dtype=torch.float32, device=torch_xla.device()))
    y = Variable(torch.LongTensor(labels).to(torch_xla.device()))  # a size or a list: kept as the CPU constructor, then moved
    empty = torch.empty(0, dtype=torch.float32, device=torch_xla.device())
    scale = torch.tensor([2.0], dtype=torch.float32, device=torch_xla.device())
    mask = torch.tensor(tuple(label > 0 for label in labels), dtype=torch.uint8, device=torch_xla.device())
    return z, y, empty, scale, mask


def step(imgs, labels):
    batch_size = imgs.shape[0]
    valid = Variable(torch.empty(batch_size, 1, dtype=torch.float32, device=torch_xla.device()).fill_(1.0), requires_grad=False)
    fake = Variable(torch.empty(imgs.size(0), 1, dtype=torch.float32, device=torch_xla.device()).fill_(0.0), requires_grad=False)
    real = Variable(imgs.to(torch_xla.device(), torch.float32))
    labels = Variable(labels.to(torch_xla.device(), torch.int64))
    onehot = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float32, device=torch_xla.device())
    noise = torch.tensor(0.5 * np.random.uniform(-1, 1, (batch_size, opt.latent_dim)), dtype=torch.float32, device=torch_xla.device())
    counts = torch.empty(4, dtype=torch.int64, device=torch_xla.device()).zero_()
    ids = torch.tensor([0, 1, 2], dtype=torch.int64, device=torch_xla.device())
    half = imgs.to(torch_xla.device(), torch.float16)
    return valid, fake, real, labels, onehot, noise, counts, ids, half


class Encoder(nn.Module):
    def reparameterize(self, mu):
        return mu + Variable(torch.tensor(np.random.normal(0, 1, mu.shape), dtype=torch.float32, device=mu.device))


def user_choice(x):
    return x.to(torch_xla.device() if opt.cuda else "cpu", torch.float64)


def negated(x, y):
    return x.to(torch_xla.device() if opt.cuda else "cpu", torch.int64), torch.ByteTensor(y).to("cpu" if opt.latent_dim > 16 else torch_xla.device())
