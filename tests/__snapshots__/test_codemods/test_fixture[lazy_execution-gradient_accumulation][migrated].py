"""Gradient accumulation: the sync follows the optimizer step, not each micro-batch. [XLA201]"""

import torch_xla


def train(model, loader, opt, scheduler, accum_steps=4):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y) / accum_steps
        loss.backward()
        if (step + 1) % accum_steps == 0:
            opt.step()
            torch_xla.sync()
            opt.zero_grad(set_to_none=True)
            scheduler.step()
