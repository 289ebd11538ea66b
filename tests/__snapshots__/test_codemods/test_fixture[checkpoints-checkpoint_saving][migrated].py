"""Checkpoints saved and resumed the ways real projects write them. [XLA101, XLA108, XLA109, XLA501, XLA604]"""

import io
import os
import shutil

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

# pytorch/examples: the weights only
xm.save(model.state_dict(), "mnist_cnn.pt")

# the PyTorch tutorial "Saving and loading a general checkpoint"
xm.save({
    "epoch": epoch,
    "model_state_dict": model.state_dict(),
    "optimizer_state_dict": optimizer.state_dict(),
    "loss": loss,
}, PATH)

checkpoint = torch.load(PATH, map_location="cpu")
model.load_state_dict(checkpoint["model_state_dict"])
optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
epoch = checkpoint["epoch"]


# pytorch/examples imagenet: the state built by the caller, the best one copied
def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    xm.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


# distributed training: rank 0 writes the shared file; every rank writes its own shard
def save_on_master(model, optimizer, step, output_dir, rank):
    if xr.global_ordinal() == 0:
        xm.save({"model": model.module.state_dict(), "step": step}, os.path.join(output_dir, "last.pt"))
    xm.save(optimizer.state_dict(), os.path.join(output_dir, f"optimizer_rank{rank}.pt"), master_only=False)
    xm.save(
        {"step": step, "rng": torch.get_rng_state()},
        os.path.join(output_dir, f"rng_state_{xr.global_ordinal()}.pt"),
        master_only=False,
    )


# a Trainer that saves and resumes itself
class Trainer:
    def __init__(self, model, optimizer, scheduler):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.step = 0

    def save(self, path):
        xm.save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "step": self.step,
            },
            path,
        )

    def resume(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = state["step"]


# keyword arguments, an aliased import, an in-memory copy of the best weights
xm.save(model.state_dict(), "weights.pt")
xm.save(model.state_dict(), "weights.pt")
best = io.BytesIO()
xm.save(model.state_dict(), best, master_only=False)

# pickling options: xm.save takes none
torch.save({k: v.cpu() for k, v in model.state_dict().items()}, "weights_v4.pt", pickle_protocol=4)
# TODO(xla-migrate): XLA501 `torch.save` with pickling options writes XLA tensors, and `xm.save` takes no such options: move the state to the CPU first (`xm.save(state, path)` without them, or tensors `.cpu()` by hand), see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.save(optimizer.state_dict(), "optimizer_legacy.pt", _use_new_zipfile_serialization=False)
