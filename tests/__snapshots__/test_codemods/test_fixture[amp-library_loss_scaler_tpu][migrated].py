# fixture: runtime=torch-tpu
"""Under TorchTPU: a timm NativeScaler's call becomes the backward pass, clipping and step it
wraps, with no sync after the step (TorchTPU is eager). [XLA401, XLA407]"""

import torch
import torch.nn.functional as F
from timm.utils import NativeScaler


def finetune(model, loader, optimizer):
    scaler = NativeScaler()
    for input, target in loader:
        with torch.autocast("tpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(input), target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_([p for group in optimizer.param_groups for p in group["params"]], 5.0)
        optimizer.step()
