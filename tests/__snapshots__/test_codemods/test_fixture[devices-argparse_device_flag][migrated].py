"""An argparse `--device cuda` option whose value becomes the device. [XLA102, XLA109, XLA111]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=lambda name: "xla" if name.startswith("cuda") else name, default="xla", help="device to train on")
parser.add_argument('--eval-device', default='xla', type=lambda name: 'xla' if name.startswith('cuda') else name)
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

device = torch.device(args.device)
model = nn.Linear(10, 2).to(device)
x = torch.randn(4, 10, device=args.device)
print(model(x).sum())
