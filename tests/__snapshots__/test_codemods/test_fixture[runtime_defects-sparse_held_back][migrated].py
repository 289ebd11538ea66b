"""Without --unsafe-fixes the sparse matrix stays sparse: each place that makes one or
computes with it is marked with a TODO, since the run raises NotImplementedError when it
is moved to the XLA device. [XLA103, XLA109, XLA201, XLA902]"""

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def propagation(index, weight, n):
    # TODO(xla-migrate): XLA902 `torch.sparse_coo_tensor(index, weight, (n, n))` makes a sparse matrix; the XLA device cannot hold a sparse tensor (torch_xla 2.9.0 has no SparseXLA kernel): the fix makes it dense (`.to_dense()`, where its indices and values are, which must be the CPU; dense, it takes n x n entries of memory, not its nonzeros); see xla-migrate's docs/runtime_defects.md
    return torch.sparse_coo_tensor(index, weight, (n, n))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, adjacency):
        # TODO(xla-migrate): XLA902 `torch.spmm(adjacency, self.linear(x))` computes with a sparse matrix; the XLA device cannot hold a sparse tensor (torch_xla 2.9.0 has no SparseXLA kernel): with the matrix dense (XLA902's fix where it is made), `torch.mm` computes the same, on the device; see xla-migrate's docs/runtime_defects.md
        return torch.spmm(adjacency, self.linear(x))


index = torch.tensor([[0, 1, 2], [1, 2, 0]])
adjacency = propagation(index, torch.ones(3), 3).to(torch_xla.device())
layer = Layer().to(torch_xla.device())
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    layer(torch.randn(3, 4).to(torch_xla.device()), adjacency).sum().backward()
    optimizer.step()
    torch_xla.sync()
