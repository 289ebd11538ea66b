# fixture: unsafe-fixes runtime=torch-tpu
"""Under TorchTPU the Hogwild launch stays even with --unsafe-fixes (XLA612 writes PyTorch/XLA's
launcher and optimizer step, which TorchTPU has not): XLA611's error names TorchTPU's form,
one process per chip with DDP over the "tpu" group. [XLA102, XLA109, XLA601, XLA611]"""

import torch
import torch.multiprocessing as mp

torch.__future__.set_swap_module_params_on_conversion(True)


def train(rank, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(2, 4, device="tpu")).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    model = torch.nn.Linear(4, 1).to("tpu")
    # TODO(xla-migrate): XLA611 `model.share_memory()` shares the model with the workers `mp.spawn` starts, which all update it (Hogwild): TorchTPU's tensors live in device memory, which processes cannot share (each is bound to its own chip), so this training cannot run on TorchTPU; train data parallel instead: one process per TPU chip (`mp.spawn` or torchrun), each with its own replica of the model, the gradients averaged by DDP over the `"tpu"` process group; the call is left as it is: a person decides what replaces it (removed alone, each worker would train its own copy of the model)
    model.share_memory()
    torch.tpu.distributed.set_tpu_launch_env(nproc_per_node=2)
    mp.spawn(train, args=(model,), nprocs=2)
