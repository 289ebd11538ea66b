"""Device memory read the XLA way."""

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = torch_xla.device()
if xm.xla_device_hw(device) == "TPU":
    info = xm.get_memory_info(device)
    print(info["bytes_used"], info["bytes_limit"])
print(met.short_metrics_report())
