# fixture: runtime=torch-tpu
"""DataParallel guards and Hogwild training under TorchTPU: the guard stays off, shared-memory
training is flagged, both in TorchTPU's words. [XLA105, XLA610, XLA611]"""

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def wrap(model, n_gpu):
    # TODO(xla-migrate): XLA610 `n_gpu > 1` guards `nn.DataParallel`, which replicates over CUDA devices only (a TorchTPU process is bound to one device, and `torch.tpu.set_device` refuses another): the check is now `False`; to train on several TPU chips, run one process per chip (`mp.spawn` or torchrun) with DDP over the `"tpu"` process group
    if False:
        model = nn.DataParallel(model)
    return model


def hogwild(model, train):
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `mp.Process` starts, which all update it (Hogwild): TorchTPU's tensors live in device memory, which processes cannot share (each is bound to its own chip), so this training cannot run on TorchTPU; train data parallel instead: one process per TPU chip (`mp.spawn` or torchrun), each with its own replica of the model, the gradients averaged by DDP over the `"tpu"` process group; the call is left as it is: a person decides what replaces it (removed alone, each worker would train its own copy of the model)
    model.share_memory()
    workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]
    for worker in workers:
        worker.start()


n_gpu = torch.tpu.device_count()
