# fixture: runtime=torch-tpu
"""Under TorchTPU: autocast prepared with functools.partial goes to the "tpu" device in bfloat16,
as a direct call does, with no import beyond torch. [XLA401]"""

import functools
from contextlib import suppress
from functools import partial

import torch


def main(args, device, model, batch):
    amp_dtype = torch.bfloat16
    if args.amp_dtype == "bfloat16":
        amp_dtype = torch.bfloat16
    amp_autocast = partial(torch.autocast, "tpu", dtype=amp_dtype) if args.amp else suppress
    with amp_autocast():
        return model(batch)


keyword = partial(torch.autocast, "tpu", dtype=torch.bfloat16)
legacy = functools.partial(torch.autocast, "tpu", dtype=torch.bfloat16, enabled=True)
positional = partial(torch.autocast, "tpu", dtype=torch.bfloat16)
