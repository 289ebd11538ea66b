# fixture: unsafe-fixes
"""Hogwild started by `mp.spawn` from the `__main__` block, the world size counted first and
read by a module function: under --unsafe-fixes the block runs in `_mp_fn` (the names the
functions read declared global), the spawn becomes one call of the worker, and XLA601's
count and launch give way to it. [XLA103, XLA109, XLA201, XLA202, XLA601, XLA611, XLA612]"""

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)


def log(rank, loss):
    if rank == 0:
        print(f"{tag}: {loss:.4f}")


def train(rank, model, opt_lr):
    opt = torch.optim.SGD(model.parameters(), lr=opt_lr)
    for step in range(10):
        x = torch.randn(4, 3).to(torch_xla.device())
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)
        torch_xla.sync()
        log(rank, loss.item())


def _mp_fn(index):
    global tag
    tag = "hogwild"
    net = nn.Linear(3, 1).to(torch_xla.device())
    # TODO(xla-migrate): XLA611 Hogwild training became synchronous data parallel (`--unsafe-fixes`): `torch_xla.launch(_mp_fn)` starts one process per XLA device (`PJRT_DEVICE`, `TPU_VISIBLE_CHIPS` choose them: the launch's own process count no longer applies), each builds its own replica of `net` and runs `train(xr.global_ordinal(), net, 0.1)`, and `xm.optimizer_step` averages the replicas' gradients at every step, where each Hogwild worker applied its own to the shared model without locks: a different training algorithm, so check the learning rate and the number of steps; the replicas start equal only if every process seeds before building `net` (`xr.global_ordinal()` is the worker's rank); code after the workers ends runs in every process, on its trained replica; see https://docs.pytorch.org/xla/master/perf/ddp.html
    train(xr.global_ordinal(), net, 0.1)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
