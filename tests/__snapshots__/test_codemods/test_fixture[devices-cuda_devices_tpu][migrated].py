# fixture: runtime=torch-tpu
"""TorchTPU: the CUDA device however it is spelled (torch.device, device strings in variables,
configs, defaults and .to(), .cuda() on tensors) becomes the "tpu" device; a choice
on the user's own flag keeps its CPU branch. [XLA101, XLA102, XLA103]"""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
args = parser.parse_args()

device = torch.device("tpu")
user_device = torch.device("tpu" if args.cuda else "cpu")
rank_device = torch.device("tpu")
fallback = torch.device("tpu")
config = {"device": "tpu", "lr": 0.1}
eval_device = 'tpu' if args.cuda else 'cpu'


def get_device(index=0):
    return "tpu"


def run(x, device="tpu"):
    return x.to(device)


mask = torch.ones(8).to("tpu")
inputs = torch.randn(8, 10).to("tpu", non_blocking=True)
targets = torch.randint(0, 10, (8,)).to("tpu", non_blocking=True)
images = torch.randn(8, 3, 4, 4).to("tpu", memory_format=torch.channels_last)
weights = torch.ones(10).to("tpu")
print(device, user_device, rank_device, fallback, config, eval_device, mask, inputs, targets, images, weights)
