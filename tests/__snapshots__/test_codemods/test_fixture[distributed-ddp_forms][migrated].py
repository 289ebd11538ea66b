"""DistributedDataParallel with device ids, under its aliases. [XLA603]"""

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, rank, args):
    model = DDP(model, gradient_as_bucket_view=True)
    other = DistributedDataParallel(
        model,
        find_unused_parameters=True,
        gradient_as_bucket_view=True,
    )
    positional = nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=True)
    return model, other, positional
