"""Choices among GPUs (ImageNet-style scripts): on XLA each process has one device, so the
migration makes both branches the same code, and only the branch stays; a choice that still
differs, or whose test does something, or a comment that would go, keeps its `if`. [XLA101, XLA103, XLA105, XLA107, XLA108, XLA109, XLA201, XLA301]"""

import argparse

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=None)
parser.add_argument("--cpu", action="store_true")
parser.add_argument("--resume", default="")
args = parser.parse_args()

device = torch_xla.device()

if args.cpu:
    device = torch.device("cpu")
else:
    device = torch_xla.device()

device = torch_xla.device()

use_cuda = bool(torch_xla.device_count())
kwargs = {}
loader = torch.utils.data.DataLoader(range(8), batch_size=4)

model = torch.nn.Linear(4, 2)
model = model.to(torch_xla.device())
head = torch.nn.Linear(2, 2).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

if args.resume:
    checkpoint = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(checkpoint["model"])

print("using", torch_xla.device_count(), "GPUs")
device = torch_xla.device()

for images, target in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:
    images = images.to(torch_xla.device(), non_blocking=True)
    target = target.to(torch_xla.device(), non_blocking=True)
    loss = torch.nn.functional.cross_entropy(head(model(images)), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()

# kept: the test calls a function of the script's own, which may do something
if pick_gpu(args):
    device = torch_xla.device()
else:
    device = torch_xla.device()

# kept: a comment on the `if` line would go with it
if args.gpu is not None:  # the GPU the user named
    device = torch_xla.device()
else:
    device = torch_xla.device()
