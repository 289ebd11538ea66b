"""Tensors read element by element in comprehensions (a sampler decoding tokens): one .tolist(). [XLA101, XLA204, XLA705]"""

import torch
import torch.nn.functional as F
import torch_xla

device = torch_xla.device()


class CharModel(torch.nn.Module):
    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits = self(idx)[:, -1, :]
            _, idx_next = torch.topk(F.softmax(logits, dim=-1), k=1, dim=-1)
            torch_xla.sync()
            # TODO(xla-migrate): XLA705 `idx = torch.cat((idx, idx_next), dim=1)` makes `idx` longer at every iteration of the loop: every length is a new shape, and XLA compiles a new graph for each (a graph a token when sampling text); write into a tensor allocated once at its full size instead (`buf = x.new_zeros(B, T_MAX)`, then `buf[:, t] = y` at position `t`) and let the model read a fixed-length window of it with a mask of the positions filled so far; or run this loop on a CPU copy of the model, where a new shape costs no compilation; see the migration guide's "Understanding Recompilations" (https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html) and https://docs.pytorch.org/xla/master/perf/recompilation.html
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def sample(model, stoi, itos, context="the "):
    x = torch.tensor([stoi[s] for s in context], dtype=torch.long)[None, ...].to(device)
    y = model.generate(x, 24)[0]
    completion = ''.join([itos[int(i)] for i in y.tolist()])
    scores = [p for p in F.softmax(model(x)[0, -1], dim=-1).tolist() if p > 0.01]
    by_token = {itos[t]: float(t) for t in y.tolist()}
    return completion, scores, by_token


def report(logits, labels):
    predictions = logits.argmax(dim=-1)
    print(", ".join(str(int(p)) for p in predictions.tolist()))
    top = torch.topk(logits, 3)
    print([int(i) for i in top[1][0].tolist()])
