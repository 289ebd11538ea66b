"""Device names kept in config dicts: subscript assignment, dict literals and dict(); a launch may still override them with `cuda`, so the reads that take them as a device are mapped too. [XLA102, XLA109, XLA111]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

DEFAULTS = {
    "lr": 3e-4,
    "device": "xla",  # overridden from the command line
    "batch_size": 32,
}

cfg = dict(DEFAULTS)
cfg["device"] = "xla"
cfg["eval_device"] = "xla"
cfg["name"] = "cuda-run"  # a run name, not a device

config = {'train_device': 'xla', 'workers': 4}
overrides = dict(device="xla", amp=True)

model = torch.nn.Linear(8, 8).to("xla" if str(cfg["device"]).startswith("cuda") else cfg["device"])
batch = torch.ones(2, 8, device="xla" if str(config["train_device"]).startswith("cuda") else config["train_device"])
