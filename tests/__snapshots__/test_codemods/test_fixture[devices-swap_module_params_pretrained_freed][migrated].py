"""A model run before its move whose output is deleted before it: the graph is gone, so the
parameters swap as usual and the optimizer built before the move keeps them. [XLA103, XLA109]"""

import torch
from transformers import AutoModelForSequenceClassification
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
outputs = model(input_ids=torch.randint(0, 100, (4, 8)))
print(outputs.logits.shape)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
del outputs
model.to(torch_xla.device())
