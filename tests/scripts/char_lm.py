"""A small character-level language model on a GPU, updated by hand (no optimizer), that
reads its loss every 10 steps, as the word-level language model example does."""

import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda")
torch.manual_seed(0)
vocab, width, context = 16, 32, 8
text = torch.randint(0, vocab, (512,))
model = nn.Sequential(nn.Embedding(vocab, width), nn.Flatten(), nn.Linear(width * context, vocab)).to(device)
lr = 0.5
for step in range(100):
    start = (step * 13) % (len(text) - context - 1)
    x = text[start : start + context].unsqueeze(0).to(device)
    y = text[start + context : start + context + 1].to(device)
    model.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
