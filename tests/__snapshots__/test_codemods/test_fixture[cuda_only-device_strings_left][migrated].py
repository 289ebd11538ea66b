"""CUDA device strings in places no rule rewrites: flagged, while messages that say "cuda" are not. [XLA111, XLA112, XLA899]"""

import argparse

import torch
import torch_xla

parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cuda", "cpu", "xla"], help="where to train", type=lambda name: "xla" if name.startswith("cuda") else name)
args = parser.parse_args()

# TODO(xla-migrate): XLA899 `"cuda"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
if args.device in ("cuda", "cuda:0"):
    print("cuda", "selected")  # a message, not a device
# TODO(xla-migrate): XLA899 `"cuda"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.set_default_device("cuda")
# TODO(xla-migrate): XLA899 `"cuda"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
print(torch.ones(2).to(describe("cuda")))


def describe(name):
    return torch.device(name)


x = torch.zeros(3)
# TODO(xla-migrate): XLA899 `torch.backends.cudnn.enabled` is a cuDNN / CUDA library setting XLA does not use: remove it; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
if torch.backends.cudnn.enabled:
    # TODO(xla-migrate): XLA899 `torch.backends.cudnn.version` is a cuDNN / CUDA library setting XLA does not use: remove it; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    print("cuDNN version", torch.backends.cudnn.version())
