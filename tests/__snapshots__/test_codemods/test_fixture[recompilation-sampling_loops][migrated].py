"""Sampling loops of char-level trainers: cut every token (a sync after the crop and before the
concatenation), no sync at the end of an evaluation loop that samples, and what stays flagged:
a crop inside the model's call, a loop that also trains. [XLA102, XLA201, XLA705]"""

import torch
import torch.nn.functional as F
import torch_xla

device = "xla"


@torch.no_grad()
def sample(model, prompt, n_tokens, block_size):
    out = prompt.to(device)
    step = 0
    while step < n_tokens:
        context = out[:, -block_size:]
        torch_xla.sync()
        probs = F.softmax(model(context)[:, -1, :], dim=-1)
        torch_xla.sync()
        out = torch.cat([out, torch.multinomial(probs, 1)], dim=1)
        step += 1
    return out[0].tolist()


def evaluate_and_sample(model, loader, prompt, block_size):
    model.eval()
    with torch.no_grad():
        seq = prompt.to(device)
        for _ in range(200):
            window = seq if seq.size(1) <= block_size else seq[:, -block_size:]
            torch_xla.sync()
            nxt = model(window)[:, -1:].argmax(-1)
            torch_xla.sync()
            seq = torch.cat((seq, nxt), dim=1)
    return seq


def sample_inline_crop(model, idx, steps, block_size):
    for _ in range(steps):
        logits = model(idx[:, -block_size:])
        torch_xla.sync()
        # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, logits[:, -1:].argmax(-1)), dim=1)` makes `idx` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a token when sampling text); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape costs no compilation; the crop `idx[:, -block_size:]` does not help: it keeps the shape only once `idx` is that long, and `idx` itself still grows; crop into a name of its own (`idx_cond = idx[:, -block_size:]`) and call the model in a statement of its own before the concatenation: xla-migrate then cuts the graph between them, and the model's graph is compiled once for the cropped length; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        idx = torch.cat((idx, logits[:, -1:].argmax(-1)), dim=1)
    return idx


def train_on_own_samples(model, optimizer, idx, steps):
    for _ in range(steps):
        logits = model(idx)
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), idx[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, logits[:, -1:].argmax(-1).detach())...` makes `idx` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a token when sampling text); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape costs no compilation; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        idx = torch.cat((idx, logits[:, -1:].argmax(-1).detach()), dim=1)
    return idx
