"""Autocast prepared with functools.partial, as timm's train.py does: the partial's arguments
migrate as a direct call's do (XLA device, bfloat16, float16 mapped where an option chooses it);
nullcontext / suppress beside it stay; a dtype named at run time is mapped where argparse reads it. [XLA401, XLA406]"""

import argparse
import functools
from contextlib import nullcontext, suppress
from functools import partial

import torch
import torch_xla

parser = argparse.ArgumentParser()
parser.add_argument("--amp", action="store_true")


def main(args, device, model, loader):
    # timm: the dtype is chosen by an option, the device type read from the device
    amp_dtype = torch.bfloat16
    if args.amp_dtype == 'bfloat16':
        amp_dtype = torch.bfloat16
    amp_autocast = suppress
    if args.amp:
        amp_autocast = partial(torch.autocast, "xla", dtype=amp_dtype)
    train_one_epoch(model, loader, amp_autocast=amp_autocast)


def train_one_epoch(model, loader, amp_autocast=suppress):
    for input, target in loader:
        with amp_autocast():
            output = model(input)
    return output


def chosen_by_getattr(args):
    return partial(torch.autocast, "xla", dtype=getattr(torch, args.precision))


def simple_forms(use_amp):
    keyword = partial(torch.autocast, "xla", dtype=torch.bfloat16)
    legacy = functools.partial(torch.autocast, "xla", dtype=torch.bfloat16)
    default_dtype = partial(torch.autocast, "xla", dtype=torch.bfloat16)
    autocast_ctx = partial(torch.autocast, "xla", dtype=torch.bfloat16)
    enabled = partial(torch.autocast, "xla", dtype=torch.bfloat16, enabled=use_amp) if use_amp else nullcontext
    off = suppress if not use_amp else partial(torch.autocast, "xla", dtype=torch.bfloat16, cache_enabled=False)
    return keyword, legacy, default_dtype, autocast_ctx, enabled, off


parser.add_argument("--precision", default="bfloat16", type=lambda name: "bfloat16" if name in ("float16", "half") else name)
