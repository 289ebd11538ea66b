"""XLA001 concerns notebook cells only: a script, IPython-free, never gets it."""
import torch

model = torch.nn.Linear(4, 4)
print(model(torch.ones(1, 4)))
