"""Library helpers bound to CUDA: timm's prefetching loaders, timm's ApexScaler, CUDA kernel
libraries (the training frameworks' arguments are fixtures/frameworks/'s). [XLA811]"""

import torch
import bitsandbytes as bnb
from flash_attn import flash_attn_func
from timm.data import PrefetchLoader, create_loader
from timm.utils import ApexScaler
from xformers.ops import memory_efficient_attention
import torch_xla


def build_loaders(args, dataset_train, dataset_eval):
    loader_train = create_loader(
        dataset_train,
        input_size=(3, 224, 224),
        batch_size=args.batch_size,
        is_training=True,
        use_prefetcher=args.prefetcher,
        num_workers=args.workers,
        device=torch_xla.device(),
    )
    loader_eval = create_loader(dataset_eval, input_size=(3, 224, 224), batch_size=64, device=torch_xla.device())
    plain = torch.utils.data.DataLoader(dataset_train, batch_size=args.batch_size, drop_last=True)
    return loader_train, loader_eval, PrefetchLoader(plain, re_prob=0.25, device=torch_xla.device())


def setups(model):
    # TODO(xla-migrate): XLA811 `ApexScaler` is timm's apex loss scaler: `apex.amp` does not exist on XLA, and bfloat16 needs no loss scaling: use no scaler (`loss_scaler = None`, with `torch.autocast('xla', dtype=torch.bfloat16)`); XLA407 converts its calls; see https://docs.pytorch.org/xla/master/perf/amp.html
    loss_scaler = ApexScaler()
    # TODO(xla-migrate): XLA811 `bnb.optim.AdamW8bit` is bitsandbytes, whose 8-bit optimizers and quantized layers are CUDA kernels: use `torch.optim.AdamW` / `torch.nn.Linear` (bfloat16 keeps the memory low); see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-3)
    return loss_scaler, optimizer


def attend(q, k, v, causal):
    if causal:
        # TODO(xla-migrate): XLA811 `flash_attn_func` is flash-attention, a CUDA kernel: use `torch.nn.functional.scaled_dot_product_attention` (or, on TPU, `torch_xla.experimental.custom_kernel.flash_attention`); see https://docs.pytorch.org/xla/master/features/pallas.html
        return flash_attn_func(q, k, v, causal=True)
    # TODO(xla-migrate): XLA811 `memory_efficient_attention` is xformers, whose attention kernels are CUDA-only: use `torch.nn.functional.scaled_dot_product_attention`, which XLA compiles; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    return memory_efficient_attention(q, k, v)
