"""A script that sets XLA's and the runtime's environment before its first torch import:
the imports the fixes add go after that import, so torch_xla reads the settings. [XLA101, XLA103, XLA109]
"""

import argparse
import os
from os import environ

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_dump_to=/tmp/xla_dump"
os.environ.setdefault("PJRT_DEVICE", "TPU")
if "TPU_VISIBLE_CHIPS" not in environ:
    environ.update({"TPU_VISIBLE_CHIPS": "0"})
os.putenv("TF_CPP_MIN_LOG_LEVEL", "1")

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)


def main():
    args = parser.parse_args()
    device = torch_xla.device()
    model = nn.Linear(8, 2).to(torch_xla.device())
    data = torch.randn(4, 8).to(device)
    for _ in range(args.steps):
        model(data).sum()


if __name__ == "__main__":
    main()
