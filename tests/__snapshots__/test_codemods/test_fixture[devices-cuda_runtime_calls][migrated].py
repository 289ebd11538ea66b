"""torch.cuda bookkeeping in a training script: seeds, device choice, synchronisation, caches. [XLA102, XLA105, XLA405]"""

import time

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

SEED = 0
torch.manual_seed(SEED)
torch_xla.manual_seed(SEED)

if not bool(torch_xla.device_count()):
    raise SystemExit("this script needs a GPU")
n_devices = torch_xla.device_count()
print("running on", xm.xla_device_hw(torch_xla.device()), "device", xr.local_ordinal())
use_bf16 = True
dtype = torch.bfloat16
use_amp = (bool(torch_xla.device_count()))

x = torch.randn(1024, 1024, device="xla")
start = time.perf_counter()
y = x @ x
torch_xla.sync(wait=True)  # wait for the matmul before reading the clock
elapsed = time.perf_counter() - start

print(f"{elapsed:.3f}s", y.shape, n_devices, use_bf16, dtype, use_amp)
