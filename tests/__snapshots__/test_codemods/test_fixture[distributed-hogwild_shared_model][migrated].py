"""Hogwild training: one model in shared memory, updated without locks by the worker
processes `torch.multiprocessing` starts. XLA tensors cannot be shared between processes,
so each `share_memory()` (here also in a helper) is an error with the data-parallel form to
write instead, and stays for a person to remove. [XLA101, XLA109, XLA201, XLA611]"""

import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(12, 24)
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))


def worker(rank, model, device, steps):
    torch.manual_seed(100 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    for _ in range(steps):
        x = torch.randn(32, 12, device=device)
        y = torch.randint(0, 3, (32,), device=device)
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        torch_xla.sync()


def publish(module):
    # TODO(xla-migrate): XLA611 `module.share_memory()` shares the model with the workers `ctx.Process` starts, which all update it (Hogwild): XLA tensors live on the device and processes cannot share them (`share_memory_()` raises `_share_fd_: only available on CPU`), so this training cannot run on XLA; train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what `mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP over the `xla` process group, see https://docs.pytorch.org/xla/master/perf/ddp.html; the call is left as it is, and raises on the XLA device: a person decides what replaces it (removed alone, each worker would train its own copy of the model)
    module.share_memory()
    return module


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    device = torch_xla.device()
    mp.set_start_method("spawn", force=True)
    model = Policy().to(device)
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `ctx.Process` starts, which all update it (Hogwild): XLA tensors live on the device and processes cannot share them (`share_memory_()` raises `_share_fd_: only available on CPU`), so this training cannot run on XLA; train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what `mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP over the `xla` process group, see https://docs.pytorch.org/xla/master/perf/ddp.html; the call is left as it is, and raises on the XLA device: a person decides what replaces it (removed alone, each worker would train its own copy of the model)
    model.share_memory()  # gradients are allocated lazily, so they are not shared
    ctx = mp.get_context("spawn")
    jobs = [ctx.Process(target=worker, args=(r, model, device, args.steps)) for r in range(args.workers)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
