# fixture: runtime=torch-tpu
"""Under TorchTPU: an autocast dtype named on the command line maps float16 to bfloat16 where
argparse reads it, and the GradScaler only float16 needed goes. [XLA401, XLA402, XLA406]"""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--amp-dtype", default="bfloat16", choices=["float16", "float32", "bfloat16"], type=lambda name: "bfloat16" if name in ("float16", "half") else name)
args = parser.parse_args()


def train_step(model, x, optimizer):
    with torch.autocast("tpu", dtype=getattr(torch, args.amp_dtype)):
        loss = model(x).sum()
    loss.backward()
    optimizer.step()
