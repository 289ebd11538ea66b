"""A DeiT-style engine.py: the loss scaler comes from main.py, which this file does not see;
its call is flagged with the lines to write. [XLA105, XLA302, XLA401, XLA407]"""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl


def train_one_epoch(model, criterion, data_loader, optimizer, device, loss_scaler, max_norm=0, is_second_order=False):
    model.train()
    for samples, targets in pl.MpDeviceLoader(data_loader, device):
        with torch.autocast("xla", dtype=torch.bfloat16):
            outputs = model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        # TODO(xla-migrate): XLA407 `loss_scaler(loss, optimizer, clip_grad=max_norm, paramete...` looks like a timm loss scaler (`NativeScaler`, `ApexScaler`), which scales the loss for float16 and steps the optimizer itself: bfloat16 needs no loss scaling, so write what it does unscaled, `loss.backward(create_graph=is_second_order); if max_norm is not None: torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm); optimizer.step()`, and xla-migrate then adds the step's `torch_xla.sync()`; see https://docs.pytorch.org/xla/master/perf/amp.html
        loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters(), create_graph=is_second_order)
        torch_xla.sync(wait=True)
