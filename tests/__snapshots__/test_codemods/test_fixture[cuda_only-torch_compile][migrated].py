"""torch.compile for GPUs dropped on XLA, where the lazy tensor compiles the step: a wrapped model,
tuning modes, CUDA graphs, a compiled function and loss, `model.compile()`, decorators. [XLA810]"""

import argparse

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--compile", type=int, default=1)
args = parser.parse_args()

model = torch.nn.Linear(8, 8)
compiled = model
explicit = model
tuned = model
overhead = model
graphs = model
shapes = model
criterion = F.cross_entropy
smooth = (lambda logits, labels: F.cross_entropy(logits, labels, label_smoothing=0.1))
warmed = model(torch.randn(2, 8))
if args.compile:
    print("compiling the model...")


def step(x):
    return model(x).sum()


def loss_fn(x, y):
    return torch.nn.functional.mse_loss(model(x), y)


@torch.no_grad()
def evaluate(x):
    return model(x).argmax(-1)
