# fixture: runtime=torch-tpu
"""TorchTPU: torch.cuda calls torch.tpu mirrors become torch.tpu calls with their arguments,
the others go; torch.accelerator stays (TorchTPU is its accelerator); memory statistics are
flagged; cuDNN and matmul switches go. [XLA105, XLA106, XLA107]"""

import time

import torch

SEED = 0
torch.manual_seed(SEED)
torch.tpu.manual_seed(SEED)
torch.tpu.manual_seed_all(SEED)

if not torch.tpu.is_available():
    raise SystemExit("this script needs an accelerator")
n_devices = torch.tpu.device_count()
torch.tpu.set_device(0)
print("running on", torch.tpu.get_device_name(0), "device", torch.tpu.current_device())
use_bf16 = torch.tpu.is_available()
rng = torch.tpu.get_rng_state()
torch.tpu.set_rng_state(rng)
print(torch.tpu.initial_seed(), torch.tpu.is_initialized())
print(torch.accelerator.device_count(), torch.accelerator.current_accelerator())

x = torch.randn(1024, 1024)
start = time.perf_counter()
y = x @ x
torch.tpu.synchronize()
torch.tpu.synchronize()
torch.accelerator.synchronize()
elapsed = time.perf_counter() - start

# TODO(xla-migrate): XLA106 `torch.cuda.max_memory_allocated()` reads CUDA memory; TorchTPU's `torch.tpu` has no memory statistics: remove the query, or report something else
print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
# TODO(xla-migrate): XLA106 `torch.cuda.get_device_properties()` describes the CUDA device and crashes without a GPU; on TorchTPU `torch.tpu.get_device_properties(device)` describes the TPU, with fields of its own: port what the code reads of it by hand
total = torch.cuda.get_device_properties(0).total_memory
print(f"{elapsed:.3f}s", y.shape, n_devices, use_bf16, total)
