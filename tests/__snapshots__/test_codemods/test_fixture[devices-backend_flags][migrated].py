"""cuDNN and TF32 switches set at the top of a training script. [XLA107]"""

import torch

model = torch.nn.Conv2d(3, 8, 3)


def make_deterministic():
    pass
