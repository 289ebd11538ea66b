"""A GPU language model with tied input and output embeddings, float16 autocast with a
GradScaler, and (with --optimizer-first) an optimizer built before the model moves to the GPU."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, WIDTH, CONTEXT = 50, 32, 8


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.mix = nn.Linear(WIDTH, WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx):
        return self.lm_head(torch.tanh(self.mix(self.wte(idx))))


torch.manual_seed(0)
model = TinyLM()
if "--optimizer-first" in sys.argv:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model.cuda()
else:
    model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scaler = torch.cuda.amp.GradScaler()
data = torch.randint(0, VOCAB, (64, CONTEXT + 1))

for step in range(20):
    batch = data[(step * 8) % 64:(step * 8) % 64 + 8].cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
