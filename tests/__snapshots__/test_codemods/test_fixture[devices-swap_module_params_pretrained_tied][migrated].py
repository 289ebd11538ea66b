"""A masked language model (its decoder tied to the input embedding) run before its move, the
output kept, the optimizer built, then the move: swapping raises, and without it the tied
weights come apart: flagged; the switch stays. [XLA101, XLA109]"""

import torch
from transformers import AutoModelForMaskedLM
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = AutoModelForMaskedLM.from_pretrained("bert-base-uncased")
outputs = model(input_ids=torch.randint(0, 100, (4, 8)))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
# TODO(xla-migrate): XLA109 `model.to(torch.device("cuda"))` after `outputs = model(input_ids=torch.randint(0, 100, (4, 8)))` ran the module and kept its output: its graph holds the parameters, so swapping them on conversion raises ("_apply(): Couldn't swap"), and without swapping its tied weights would come apart; move the module before running it, or `del` the output before the move
model.to(torch_xla.device())
