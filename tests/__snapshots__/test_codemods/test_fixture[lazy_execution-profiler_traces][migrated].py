"""Steps inside profiler traces: the sync goes after a Trace; a StepTrace syncs itself. [XLA201]"""

import torch_xla.debug.profiler as xp
import torch_xla


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        with xp.Trace("train_step"):
            loss = model(x, y)
            loss.backward()
            optimizer.step()
        torch_xla.sync()


def train_with_step_trace(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        with xp.StepTrace("train_step", step_num=step):
            loss = model(x, y)
            loss.backward()
            optimizer.step()
