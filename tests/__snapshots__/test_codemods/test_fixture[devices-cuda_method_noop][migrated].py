"""`.cuda` that is no Tensor.cuda()/Module.cuda() call: flags, numba's cuda module, .cpu() and .to()."""

import argparse

import torch
import torch_xla
from numba import cuda

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
args = parser.parse_args()

use_gpu = args.cuda  # read, not called
if cuda.is_available():
    gpu_array = cuda.to_device([1, 2, 3])

model = torch.nn.Linear(4, 4).to(torch_xla.device())
result = model(torch.ones(1, 4, device="xla")).cpu()
