# fixture: runtime=torch-tpu unsafe-fixes
"""Under TorchTPU with unsafe fixes: float16 outside autocast becomes bfloat16, and a scaler
made elsewhere is unscaled. [XLA403, XLA405]"""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16")


def prepare(model, x):
    model = model.to(torch.bfloat16)
    x = x.to(torch.bfloat16)
    return model, x


def train_step(model, x, optimizer, scaler):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
