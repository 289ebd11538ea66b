"""Modules moved after something holds their parameters: a GPT with tied embeddings, a Trainer
given an optimizer built before it calls `.cuda(gpu_id)`, layers that own their optimizers. [XLA103, XLA109, XLA201]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class GPT(nn.Module):
    def __init__(self, vocab_size=64, n_embd=32):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying

    def forward(self, idx):
        return self.lm_head(self.wte(idx))


class Trainer:
    def __init__(self, model, optimizer, gpu_id):
        self.gpu_id = gpu_id
        self.model = model.to(torch_xla.device())
        self.optimizer = optimizer

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        logits = self.model(x.to(torch_xla.device()))
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.to(torch_xla.device()).view(-1))
        loss.backward()
        self.optimizer.step()
        torch_xla.sync()
        return loss


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, device=None):
        super().__init__(in_features, out_features, device=device)
        self.opt = torch.optim.Adam(self.parameters(), lr=0.03)


def main():
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    trainer = Trainer(model, optimizer, gpu_id=0)
    layers = [Layer(784, 500).to(torch_xla.device()), Layer(500, 500).to(torch_xla.device())]
    return trainer, layers


if __name__ == "__main__":
    main()
