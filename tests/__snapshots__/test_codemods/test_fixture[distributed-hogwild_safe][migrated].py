"""A Hogwild launch XLA612 could rewrite, without --unsafe-fixes: XLA611's error names the
unsafe fix, and XLA612 offers it at the launch. [XLA102, XLA109, XLA201, XLA611, XLA612]"""

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
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `mp.Process` starts, which all update it (Hogwild): XLA tensors live on the device and processes cannot share them (`share_memory_()` raises `_share_fd_: only available on CPU`), so this training cannot run on XLA; train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what `mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP over the `xla` process group, see https://docs.pytorch.org/xla/master/perf/ddp.html; the call is left as it is, and raises on the XLA device: a person decides what replaces it (removed alone, each worker would train its own copy of the model); `--unsafe-fixes` rewrites this launch to that form (XLA612: synchronous data parallel, a different training algorithm from Hogwild's)
    model.share_memory()
    for rank in range(2):
        mp.Process(target=train, args=(rank, model)).start()
