"""The Hugging Face course's loop: a from_pretrained BERT run on a batch before its move, the
output kept, then the optimizer and scheduler built, then the move. The kept graph holds the
parameters, so swapping them would raise ("_apply(): Couldn't swap LayerNorm.weight"): no
switch; the model moves before the optimizer takes its parameters. [XLA101, XLA109, XLA201]"""

import torch
from transformers import AutoModelForSequenceClassification, get_scheduler
import torch_xla

checkpoint = "bert-base-uncased"
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2)
batch = {"input_ids": torch.randint(0, 100, (4, 8)), "labels": torch.tensor([0, 1, 0, 1])}
outputs = model(**batch)
print(outputs.loss, outputs.logits.shape)
model.to(torch_xla.device())

# the optimizer and the learning rate scheduler
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
num_epochs = 3
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=num_epochs)

device = torch_xla.device()
model.to(device)

model.train()
for epoch in range(num_epochs):
    batch = {k: v.to(device) for k, v in batch.items()}
    outputs = model(**batch)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    lr_scheduler.step()
    optimizer.zero_grad()
