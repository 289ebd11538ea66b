# fixture: target=multiprocess
"""A library module: no __main__ block and no training at module level."""
import torch

SIZES = (8, 16)


def build():
    return torch.nn.Sequential(torch.nn.Linear(*SIZES))
