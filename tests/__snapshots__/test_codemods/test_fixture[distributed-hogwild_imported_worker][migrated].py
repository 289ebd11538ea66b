# fixture: unsafe-fixes
"""pytorch/examples' mnist_hogwild layout: the workers' function comes from another module
(`from train import train`), where its optimizer steps are. This file's rewrite could not make
those steps average the gradients, so --unsafe-fixes leaves the launch, and XLA611's error
says why and what to do. [XLA101, XLA109, XLA611]"""

import argparse

import torch
import torch.multiprocessing as mp
from model import Net
from train import test, train
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-processes", type=int, default=2)
    args = parser.parse_args()
    device = torch_xla.device()
    torch.manual_seed(1)
    mp.set_start_method("spawn", force=True)
    model = Net().to(device)
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `mp.Process` starts, which all update it (Hogwild): XLA tensors live on the device and processes cannot share them (`share_memory_()` raises `_share_fd_: only available on CPU`), so this training cannot run on XLA; train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what `mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP over the `xla` process group, see https://docs.pytorch.org/xla/master/perf/ddp.html; the call is left as it is, and raises on the XLA device: a person decides what replaces it (removed alone, each worker would train its own copy of the model); `--unsafe-fixes` leaves this launch (XLA612): the workers' function `train` is not defined in this file, so the optimizer steps it makes cannot be rewritten here: each must average the replicas' gradients (`xm.optimizer_step(optimizer)`) for the processes to train one model; define the worker here, or launch `def _mp_fn(index)` with the same block by hand and change its steps
    model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    test(args, model, device)
