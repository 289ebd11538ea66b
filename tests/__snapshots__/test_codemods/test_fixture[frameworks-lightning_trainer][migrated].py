"""Lightning Trainers set up for CUDA GPUs: the accelerator, Lightning 1.x's gpus=, devices,
float16 precisions, DDP and FSDP strategies, cuDNN's benchmark, SyncBatchNorm.
[XLA820, XLA821, XLA822]"""

import lightning as L
import pytorch_lightning as pl
from lightning.pytorch import Trainer
from lightning.pytorch.strategies import FSDPStrategy


def build(args, model, data):
    trainer = L.Trainer(accelerator="tpu", devices=1, precision="32-true", max_epochs=args.epochs)
    trainer.fit(model, data)


def legacy(args):
    return pl.Trainer(devices="auto", precision="32-true", max_epochs=3, accelerator="tpu")


def multi_gpu(args):
    # TODO(xla-migrate): XLA820 `devices=4`: Lightning on XLA devices takes `devices=1`, `"auto"` (all of the host's), their count or one `[i]`, and refuses other counts: use 1 or "auto" (the global batch is then the batch size times the devices used); see https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html
    # TODO(xla-migrate): XLA822 `sync_batchnorm=True` wraps BatchNorm layers in torch.nn.SyncBatchNorm, which takes CUDA, XPU and PrivateUse1 tensors only and raises on XLA devices once several train: drop it (each device normalises its own batch), or all-reduce the statistics with `xm.all_reduce`; see https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html
    return Trainer(
        accelerator="tpu",
        devices=4,
        sync_batchnorm=True,
        precision="bf16-true",
    )


def every_gpu():
    return Trainer(accelerator="tpu", devices="auto", precision="32-true")


def sharded():
    fsdp = Trainer(accelerator="tpu", devices="auto", strategy="xla_fsdp", precision="32-true")
    # TODO(xla-migrate): XLA822 `strategy=FSDPStrategy(cpu_offload=True)` is PyTorch's FSDP: on XLA use `XLAFSDPStrategy(auto_wrap_policy=...)` (or `strategy="xla_fsdp"`), whose wrapping policy and options are PyTorch/XLA's; see https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html
    custom = Trainer(accelerator="tpu", strategy=FSDPStrategy(cpu_offload=True))
    return fsdp, custom


def default_accelerator(args):
    # "auto" picks XLA on a TPU VM: only what XLA refuses changes
    plain = Trainer(max_epochs=2)
    mixed = Trainer(precision="32-true")
    wide = Trainer(accelerator=args.accelerator, precision=args.precision, deterministic=True)
    return plain, mixed, wide


def doubles():
    # TODO(xla-migrate): XLA821 `precision="64-true"` has no TPU form: Lightning on XLA takes "32-true", "16-true" or "bf16-true" (TPUs compute neither float64 nor FP8): choose one of them; see https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
    return Trainer(accelerator="tpu", precision="64-true")
