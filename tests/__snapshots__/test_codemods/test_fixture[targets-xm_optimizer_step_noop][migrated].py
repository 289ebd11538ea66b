# fixture: target=multiprocess
import torch_xla
import torch_xla.core.xla_model as xm


def train_step(model, batch, optimizer, scheduler):
    loss = model(batch).sum()
    loss.backward()
    xm.optimizer_step(optimizer, barrier=True)
    scheduler.step()
