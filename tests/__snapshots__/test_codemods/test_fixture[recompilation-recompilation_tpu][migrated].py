# fixture: runtime=torch-tpu unsafe-fixes
"""Recompilation hazards under TorchTPU in a script that calls torch.compile: reported in its words
(a recompile for a new shape, a graph break for a value read or a data-dependent shape); drop_last
is set; the sampling loop is flagged, not synced. [XLA701, XLA702, XLA703, XLA704, XLA705, XLA810]"""

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def collate(batch):
    # TODO(xla-migrate): XLA704 `pad_sequence` pads to the longest sequence of each batch: every new length is a new shape, and `torch.compile` compiles the step again for it (until it marks that size dynamic); pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
    return pad_sequence(batch, batch_first=True)


def train(model, train_set, optimizer, device):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, collate_fn=collate, drop_last=True)
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        # TODO(xla-migrate): XLA702 `.nonzero()` returns as many elements as the data says: `torch.compile` breaks the graph there (the count is known only once it runs), and what follows has a new shape for every count; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
        keep = y.nonzero()
        # TODO(xla-migrate): XLA702 `logits[y > 0]` indexes with a boolean mask (guessed from the index): the result has as many elements as the mask is true, so `torch.compile` breaks the graph there and what follows has a new shape for every count; keep the shape with a mask instead: `torch.where(mask, x, 0)` or `x * mask`, and divide sums by `mask.sum()` where a mean is needed; see https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
        loss = F.cross_entropy(logits[y > 0], y[y > 0])
        # TODO(xla-migrate): XLA703 `if` on `loss.item()` reads a tensor value: `torch.compile` breaks the graph there to get it (a host sync), and each branch taken compiles a graph of its own; keep the choice on the device (`torch.where(cond, a, b)`), or check it every N steps; see https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
        if loss.item() > 10:
            break
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return keep


@torch.no_grad()
def generate(model, idx, max_new_tokens, block_size):
    for t in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits = model(idx_cond)
        idx_next = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)
        # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, idx_next), dim=1)` makes `idx` longer at every iteration of the loop: every length is a new shape, for which `torch.compile` compiles the model's graph again (until it marks that length dynamic); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or call the uncompiled model in this loop, which TorchTPU runs eagerly at no compilation cost; the crop `idx[:, -block_size:]` does not help: it keeps the shape only once `idx` is that long, and `idx` itself still grows; see https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
        idx = torch.cat((idx, idx_next), dim=1)
        # TODO(xla-migrate): XLA705 `idx[:, :t]` is sliced by the loop index `t`: its length changes at every iteration, a new shape each time, for which `torch.compile` compiles again (until it marks that length dynamic); slice a fixed length (`x[:, t:t + W]` of an input padded by W) or keep the full length and mask the positions past `t`; see https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
        print(idx[:, :t])
    return idx


def compiled(model):
    return torch.compile(model, backend="tpu")
