# fixture: runtime=torch-tpu
"""Under TorchTPU, DeiT's engine.py: a loss scaler made in another file is flagged with the lines to
write, and no PyTorch/XLA sync is promised. [XLA401, XLA407]"""

import torch


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, max_norm=0):
    for samples, targets in data_loader:
        with torch.autocast("tpu", dtype=torch.bfloat16):
            loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        # TODO(xla-migrate): XLA407 `loss_scaler(loss, optimizer, clip_grad=max_norm, paramete...` looks like a timm loss scaler (`NativeScaler`, `ApexScaler`), which scales the loss for float16 and steps the optimizer itself: bfloat16 needs no loss scaling, so write what it does unscaled, `loss.backward(); if max_norm is not None: torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm); optimizer.step()`; see https://docs.pytorch.org/docs/stable/amp.html
        loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters())
