# fixture: unsafe-fixes
"""Hogwild workers made by a list comprehension in `main()`, started and joined by loops of
their own, the optimizer made in the worker: under --unsafe-fixes the `__main__` block runs
in `_mp_fn` under `torch_xla.launch`, `main()` builds the model in every process, the launch
becomes one call of the worker with the process's ordinal, and the worker's step averages
the gradients; XLA611's error stays, saying the training is no longer Hogwild's.
[XLA102, XLA103, XLA109, XLA201, XLA611, XLA612]"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)


def worker(rank, model, steps, lr):
    torch.manual_seed(1000 + rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        x = torch.randn(16, 8, device="xla")
        optimizer.zero_grad()
        F.mse_loss(model(x), x.sum(dim=1, keepdim=True)).backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(torch_xla.device())
    # TODO(xla-migrate): XLA611 Hogwild training became synchronous data parallel (`--unsafe-fixes`): `torch_xla.launch(_mp_fn)` starts one process per XLA device (`PJRT_DEVICE`, `TPU_VISIBLE_CHIPS` choose them: the launch's own process count no longer applies), each builds its own replica of `model` and runs `worker(xr.global_ordinal(), model, 100, 1e-3)`, and `xm.optimizer_step` averages the replicas' gradients at every step, where each Hogwild worker applied its own to the shared model without locks: a different training algorithm, so check the learning rate and the number of steps; the replicas start equal only if every process seeds before building `model` (`xr.global_ordinal()` is the worker's rank); code after the workers ends runs in every process, on its trained replica; see https://docs.pytorch.org/xla/master/perf/ddp.html
    worker(xr.global_ordinal(), model, 100, 1e-3)
    print(model(torch.ones(1, 8, device="xla")).item())


def _mp_fn(index):
    main()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
