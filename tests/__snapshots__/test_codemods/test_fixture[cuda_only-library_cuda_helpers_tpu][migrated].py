# fixture: runtime=torch-tpu
"""Under TorchTPU: timm's prefetching loader gets torch.device("tpu"); float16 trainer options and
CUDA kernel libraries are flagged with TorchTPU's counterparts. [XLA811]"""

import bitsandbytes as bnb
import flash_attn
from accelerate import Accelerator
from lightning import Trainer
from timm.data import create_loader
from timm.utils import ApexScaler
from transformers import TrainingArguments
import torch

loader = create_loader(dataset, input_size=(3, 224, 224), batch_size=64, use_prefetcher=True, device=torch.device("tpu"))
# TODO(xla-migrate): XLA811 `ApexScaler` is timm's apex loss scaler: `apex.amp` does not exist on TPU, and bfloat16 needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('tpu', dtype=torch.bfloat16)`); XLA407 converts its calls; see https://docs.pytorch.org/docs/stable/amp.html
loss_scaler = ApexScaler()
# TODO(xla-migrate): XLA811 `mixed_precision="fp16"` makes Accelerator autocast in float16 with a CUDA GradScaler: on TPU use `mixed_precision="bf16"`, which needs no loss scaling; see https://docs.pytorch.org/docs/stable/amp.html
accelerator = Accelerator(mixed_precision="fp16")
# TODO(xla-migrate): XLA811 Lightning's Trainer is set up for CUDA GPUs: `precision="16-mixed"` (float16 with a CUDA GradScaler) -> `"bf16-mixed"`; `accelerator="gpu"`; Lightning's TPU accelerator runs on PyTorch/XLA, not TorchTPU: migrate this script with `--runtime torch-xla`, or train without the Trainer on `torch.device("tpu")`; see https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html
trainer = Trainer(accelerator="gpu", precision="16-mixed")
# TODO(xla-migrate): XLA811 `fp16=True` makes TrainingArguments autocast in float16 with a CUDA GradScaler: on TPU use `bf16=True`, which needs no loss scaling; see https://docs.pytorch.org/docs/stable/amp.html
training_args = TrainingArguments(output_dir="out", fp16=True)
# TODO(xla-migrate): XLA811 `bnb.optim.Adam8bit` is bitsandbytes, whose 8-bit optimizers and quantized layers are CUDA kernels: use `torch.optim.AdamW` / `torch.nn.Linear` (bfloat16 keeps the memory low); see https://pypi.org/project/torch-tpu/
optimizer = bnb.optim.Adam8bit(model.parameters())
# TODO(xla-migrate): XLA811 `flash_attn.flash_attn_func` is flash-attention, a CUDA kernel: use `torch.nn.functional.scaled_dot_product_attention` (or TorchTPU's `torch.tpu.ops.splash_sdpa`); see https://pypi.org/project/torch-tpu/
out = flash_attn.flash_attn_func(q, k, v)
