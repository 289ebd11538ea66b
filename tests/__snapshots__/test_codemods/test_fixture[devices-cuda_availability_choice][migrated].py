"""The guide's own example: "cuda" if torch.cuda.is_available() else "cpu", in its common spellings. [XLA101, XLA102, XLA109]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
DEVICE = "xla"
device_name: str = 'xla'
backup_device = torch_xla.device()

model = torch.nn.Linear(2, 2)
model.to(device)
data = torch.randn(8, 2)
data = data.to(device)
weights = torch.zeros(2, device=DEVICE)
