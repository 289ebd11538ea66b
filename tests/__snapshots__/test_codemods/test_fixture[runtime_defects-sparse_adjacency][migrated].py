# fixture: unsafe-fixes
"""A graph convolution whose normalized adjacency is a sparse matrix: built from a scipy
matrix (the legacy torch.sparse.FloatTensor), with torch.sparse_coo_tensor, or by
x.to_sparse(), and multiplied with torch.spmm / torch.sparse.mm. The XLA device cannot hold
a sparse tensor, so the fix keeps each matrix dense and multiplies with torch.mm; what has
no dense form here (a sparse softmax, a sparse tensor's parts, a CUDA sparse type) is
marked. [XLA102, XLA103, XLA109, XLA201, XLA902]"""

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def scipy_to_torch(matrix):
    matrix = matrix.tocoo().astype(np.float32)
    indices = torch.from_numpy(np.vstack((matrix.row, matrix.col)).astype(np.int64))
    values = torch.from_numpy(matrix.data)
    return torch.sparse_coo_tensor(indices, values, torch.Size(matrix.shape)).to_dense()


def edge_weights(index, weight, n):
    adjacency = torch.sparse_coo_tensor(index, weight, (n, n)).to_dense().to("xla")
    legacy = torch.sparse_coo_tensor(indices=index, values=weight, size=(n, n)).to_dense()
    degree = torch.sum(adjacency, 1).to_dense()
    return adjacency, legacy, degree


def attention(index, scores, n):
    # TODO(xla-migrate): XLA902 `torch.cuda.sparse.FloatTensor(index, scores, torch.Size([...` builds a sparse matrix on the GPU; the XLA device cannot hold a sparse tensor (torch_xla 2.9.0 has no SparseXLA kernel): build it dense, on the CPU (`torch.sparse_coo_tensor(i, v, size).to_dense()`, then move it) or where `i` and `v` are (`torch.zeros(size, device=v.device).index_put((i[0], i[1]), v, accumulate=True)`); see xla-migrate's docs/runtime_defects.md
    weights = torch.cuda.sparse.FloatTensor(index, scores, torch.Size([n, n]))
    # TODO(xla-migrate): XLA902 `torch.sparse.softmax(weights, 1)`: the XLA device cannot hold a sparse tensor (torch_xla 2.9.0 has no SparseXLA kernel); a sparse softmax leaves out the entries not stored; on a dense matrix whose zeros are those entries `torch.softmax(x.masked_fill(x == 0, float('-inf')), dim)` computes it (a row with no entry gives NaN); see xla-migrate's docs/runtime_defects.md
    return torch.sparse.softmax(weights, 1), weights._values()


class GraphConvolution(nn.Module):
    def __init__(self, features, out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features, out))
        self.bias = nn.Parameter(torch.zeros(out))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adjacency):
        support = torch.mm(x, self.weight)
        return torch.addmm(self.bias.expand(x.shape[0], -1), adjacency, support)


class GCN(nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.conv = GraphConvolution(features, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x, adjacency):
        h = F.relu(torch.mm(adjacency, self.conv(x, adjacency)))
        return F.log_softmax(self.out(torch.mm(adjacency, h)), dim=1)


adjacency = scipy_to_torch(sp.eye(8) + sp.random(8, 8, density=0.2)).to(torch_xla.device())
features = torch.randn(8, 4).to(torch_xla.device())
labels = torch.randint(0, 2, (8,)).to(torch_xla.device())
model = GCN(4, 16, 2).to(torch_xla.device())
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(5):
    optimizer.zero_grad()
    loss = F.nll_loss(model(features, adjacency), labels)
    loss.backward()
    optimizer.step()
    torch_xla.sync()
