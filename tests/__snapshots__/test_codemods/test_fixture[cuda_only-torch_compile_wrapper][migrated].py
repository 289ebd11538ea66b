"""A script that reads torch.compile's wrapper (`model._orig_mod`) keeps it: re-backed with
`backend="openxla"` rather than dropped, and so is a compiler made with no model. [XLA810]"""

import torch

model = torch.nn.Linear(8, 8)
model = torch.compile(model, backend="openxla")
compiler = torch.compile(fullgraph=True, backend="openxla")
state = model._orig_mod.state_dict()
