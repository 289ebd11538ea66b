"""Graphs that are not CUDA graphs: a compute graph in the model, autograd's create_graph."""

import torch


class GraphNet(torch.nn.Module):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(self.graph @ x)


model = GraphNet(torch.eye(4))
x = torch.randn(4, 4, requires_grad=True)
(grad,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
