"""Devices named at run time: a --device option given `cuda` or `cuda:2` on the command line, the environment, a config. [XLA102, XLA104, XLA109, XLA111]"""

import argparse
import json
import os

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N", type=lambda name: "xla" if name.startswith("cuda") else name)
    parser.add_argument('--eval-device', type=lambda name: 'xla' if name.startswith('cuda') else name, choices=['cpu', 'cuda', 'xla'], default='xla')
    parser.add_argument("--sample_device", type=lambda name: torch.device("xla" if name.startswith("cuda") else name), default="cpu")
    return parser.parse_args()


def load_config(path):
    with open(path) as f:
        config = json.load(f)
    device = config["device"]
    device = "xla" if str(device).startswith("cuda") else device
    return config, device


args = parse_args()
data_device = os.environ.get("DATA_DEVICE", "xla")
data_device = "xla" if str(data_device).startswith("cuda") else data_device
model = nn.Linear(8, 2).to(args.device)
if args.device == "xla":
    print("training on the GPU")
x = torch.randn(4, 8, device=data_device).to(args.eval_device)
print(model(x.to(args.device)).sum(), args.sample_device)
