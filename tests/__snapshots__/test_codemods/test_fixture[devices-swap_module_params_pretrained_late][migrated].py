"""A model run before its move, its output kept, with nothing taking its parameters before the
move (the optimizer comes after it): no switch, which would make the move raise. [XLA103, XLA109]"""

import torch
from transformers import AutoModelForSequenceClassification
import torch_xla

model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
outputs = model(input_ids=torch.randint(0, 100, (4, 8)))
model.to(torch_xla.device())
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
