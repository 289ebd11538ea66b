# fixture: unsafe-fixes
"""Hogwild launches --unsafe-fixes leaves, with XLA611's error saying why: the list of
workers is read after the join (their exit codes), so the launch is more than a start and
a wait. [XLA102, XLA109, XLA201, XLA611]"""

import torch
import torch.multiprocessing as mp
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def train(rank, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(2, 4, device="xla")).sum().backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    model = torch.nn.Linear(4, 1).to("xla")
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `mp.Process` starts, which all update it (Hogwild): XLA tensors live on the device and processes cannot share them (`share_memory_()` raises `_share_fd_: only available on CPU`), so this training cannot run on XLA; train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what `mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP over the `xla` process group, see https://docs.pytorch.org/xla/master/perf/ddp.html; the call is left as it is, and raises on the XLA device: a person decides what replaces it (removed alone, each worker would train its own copy of the model); `--unsafe-fixes` leaves this launch (XLA612): `p`, `procs`, made by the workers' launch, read after it
    model.share_memory()
    procs = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
