"""A timm-style image classifier: NativeScaler made in main() and called in the training step
(clip mode chosen at run time, gradient accumulation, a literal clip value, no clipping). [XLA103, XLA109, XLA201, XLA401, XLA407]"""

import torch
import torch.nn.functional as F
from timm.utils import NativeScaler
import torch_xla
from timm.utils import dispatch_clip_grad

torch.__future__.set_swap_module_params_on_conversion(True)


def train_one_epoch(model, loader, optimizer, args, loss_scaler=None, accum_steps=1):
    model.train()
    for batch_idx, (input, target) in enumerate(loader):
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(input), target) / accum_steps
        need_update = (batch_idx + 1) % accum_steps == 0
        if loss_scaler is not None:
            # the scaler steps the optimizer itself
            loss.backward()
            if need_update:
                if args.clip_grad is not None:
                    dispatch_clip_grad(model.parameters(), args.clip_grad, mode=args.clip_mode)
                optimizer.step()
                torch_xla.sync()
        else:
            loss.backward()
            if need_update:
                optimizer.step()
                torch_xla.sync()
        if need_update:
            optimizer.zero_grad()


def finetune(model, loader, optimizer):
    scaler = NativeScaler()
    for input, target in loader:
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(input), target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_([p for group in optimizer.param_groups for p in group["params"]], 5.0)
        optimizer.step()  # clipped by value
        torch_xla.sync()


def distill(student, teacher, loader, optimizer, loss_scaler):
    for input, _ in loader:
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = F.mse_loss(student(input), teacher(input).detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()


def main(args, model, loader):
    model.to(torch_xla.device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_scaler = NativeScaler() if args.amp else None
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, args, loss_scaler=loss_scaler)
