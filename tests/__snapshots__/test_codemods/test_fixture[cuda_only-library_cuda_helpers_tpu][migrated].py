# fixture: runtime=torch-tpu
"""Under TorchTPU: timm's prefetching loader gets torch.device("tpu"); CUDA kernel libraries are
flagged with TorchTPU's counterparts. [XLA811]"""

import bitsandbytes as bnb
import flash_attn
from timm.data import create_loader
from timm.utils import ApexScaler
import torch

loader = create_loader(dataset, input_size=(3, 224, 224), batch_size=64, use_prefetcher=True, device=torch.device("tpu"))
# TODO(xla-migrate): XLA811 `ApexScaler` is timm's apex loss scaler: `apex.amp` does not exist on TPU, and bfloat16 needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('tpu', dtype=torch.bfloat16)`); XLA407 converts its calls; see https://docs.pytorch.org/docs/stable/amp.html
loss_scaler = ApexScaler()
# TODO(xla-migrate): XLA811 `bnb.optim.Adam8bit` is bitsandbytes, whose 8-bit optimizers and quantized layers are CUDA kernels: use `torch.optim.AdamW` / `torch.nn.Linear` (bfloat16 keeps the memory low); see https://pypi.org/project/torch-tpu/
optimizer = bnb.optim.Adam8bit(model.parameters())
# TODO(xla-migrate): XLA811 `flash_attn.flash_attn_func` is flash-attention, a CUDA kernel: use `torch.nn.functional.scaled_dot_product_attention` (or TorchTPU's `torch.tpu.ops.splash_sdpa`); see https://pypi.org/project/torch-tpu/
out = flash_attn.flash_attn_func(q, k, v)
