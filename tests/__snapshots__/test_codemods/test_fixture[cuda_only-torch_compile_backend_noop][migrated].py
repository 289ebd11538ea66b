"""torch.compile already aimed at XLA, or at a backend chosen elsewhere."""

import re

import torch

model = torch.nn.Linear(8, 8)
compiled = torch.compile(model, backend="openxla")
debug = torch.compile(model, backend="eager")
chosen = torch.compile(model, backend=BACKEND)
pattern = re.compile(r"step (\d+)")
code = compile("1 + 1", "<expr>", "eval")
