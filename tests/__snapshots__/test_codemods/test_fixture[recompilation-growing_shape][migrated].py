"""Sampling in a training script: minGPT's generate, a callback that samples text, a prefix loop. [XLA201, XLA702, XLA705]"""

import torch
import torch.nn as nn
from torch.nn import functional as F
import torch_xla


class GPT(nn.Module):
    def __init__(self, vocab_size=65, block_size=32, n_embd=64):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        return self.lm_head(self.tok_emb(idx))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            # crop the context to block_size: the same length only once idx holds block_size tokens
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            torch_xla.sync()
            logits = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                # TODO(xla-migrate): XLA702 `logits[logits < v[:, [-1]]] = ...` assigns through a boolean mask (guessed from the index): XLA computes the positions on the CPU at every step; write `x = x.masked_fill(mask, value)` or `x = torch.where(mask, value, x)`, which keep the work on the device; see https://docs.pytorch.org/xla/master/perf/recompilation.html
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            torch_xla.sync()
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def sample_callback(model, device, steps=500):
    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    while context.size(1) < steps:
        logits = model(context)[:, -1, :]
        next_token = torch.argmax(logits, dim=-1, keepdim=True)
        torch_xla.sync()
        # TODO(xla-migrate): XLA705 `context = torch.cat([context, next_token], dim=1)` makes `context` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a token when sampling text); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape costs no compilation; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        context = torch.cat([context, next_token], dim=1)
    return context


def evaluate(model, loader, device):
    predictions = torch.empty(0, dtype=torch.long, device=device)
    for x, _ in loader:
        # TODO(xla-migrate): XLA705 `predictions = torch.cat((predictions, model(x.to(device))...` makes `predictions` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a batch); collect the pieces in a list (`parts.append(y)`) and concatenate once after the loop; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        predictions = torch.cat((predictions, model(x.to(device)).argmax(-1)))
    return predictions


def train(model, data, optimizer, device, max_iters=100):
    for it in range(max_iters):
        # TODO(xla-migrate): XLA705 `data[:, :it + 1]` is sliced by the loop index `it`: its length changes at every iteration, a new shape and a new graph each time; slice a fixed length (`x[:, it:it + W]` of an input padded by W) or keep the full length and mask the positions past `it`; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        x = data[:, :it + 1].to(device)  # a longer prefix every iteration
        loss = F.cross_entropy(model(x).flatten(0, 1), x.flatten())
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        optimizer.zero_grad()
        if it % 50 == 0:
            print(sample_callback(model, device, steps=100))
