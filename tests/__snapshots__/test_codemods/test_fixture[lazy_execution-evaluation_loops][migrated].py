"""Evaluation and inference loops that no loader syncs: one sync per iteration. [XLA203, XLA705, XLA904]"""

import torch
import torch_xla


@torch.no_grad()
def generate(model, idx, steps, device):
    for _ in range(steps):
        logits, _ = model(idx.to(device))
        next_token = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        torch_xla.sync()
        # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, next_token.cpu()), dim=1)` makes `idx` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a token when sampling text); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape costs no compilation; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
        idx = torch.cat((idx, next_token.cpu()), dim=1)
    return idx


def evaluate(net, batches, device):
    correct = 0
    with torch.no_grad():
        for inputs, labels in batches:
            outputs = net(inputs.to(device))
            correct += (outputs.argmax(1) == labels.to(device)).sum()
            torch_xla.sync()
    return correct


@torch.no_grad()
def beam_search(model, batches, steps):
    # Nested loops: only the innermost one that runs the model gets the sync.
    for batch in batches:
        tokens = batch.to(device)
        for _ in range(steps):
            tokens = model(tokens)
            torch_xla.sync()
