"""Globals a configurator overrides from the command line (`--device=cuda:1`) or a config
file, with exec, the way nanoGPT does. [XLA102, XLA104, XLA109, XLA111]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

# defaults, which `python train.py config/small.py --device=cuda:1` may override
out_dir = "out"
device = "xla"
eval_device = "cpu"
batch_size = 8
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, str))]
exec(open("configurator.py").read())
device = "xla" if str(device).startswith("cuda") else device
eval_device = "xla" if str(eval_device).startswith("cuda") else eval_device
config = {k: globals()[k] for k in config_keys}

device_type = "xla" if "xla" in device else "cpu"
model = torch.nn.Linear(4, 4).to(device)
x = torch.randn(batch_size, 4, device=device)
print(model(x).sum().item(), device_type, eval_device, config)
