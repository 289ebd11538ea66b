"""An argparse `--cuda` switch guarding `.cuda()` calls on the model, data and loss. [XLA101, XLA103, XLA105, XLA109]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser(description="word language model")
parser.add_argument("--cuda", action="store_true", help="use CUDA")
parser.add_argument("--lr", type=float, default=20)
args = parser.parse_args()

if bool(torch_xla.device_count()) and not args.cuda:
    print("WARNING: You have a CUDA device, so you should probably run with --cuda")

device = torch.device("xla" if args.cuda else "cpu")

model = nn.LSTM(32, 64)
criterion = nn.CrossEntropyLoss()
if args.cuda:
    model.to(torch_xla.device())
    criterion = criterion.to(torch_xla.device())

data = torch.randn(5, 3, 32)
if args.cuda:
    data = data.to(torch_xla.device())
output, _ = model(data)
