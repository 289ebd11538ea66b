"""Device counts that guard a DataParallel wrap become False: DataParallel does not replicate
on XLA. In the style of the PyTorch ImageNet example and older Hugging Face scripts. [XLA103, XLA105, XLA109, XLA610]
"""

import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DataParallel
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser()
parser.add_argument("--no_cuda", action="store_true")
parser.add_argument("--per_gpu_batch_size", type=int, default=8)
args = parser.parse_args()
args.n_gpu = 0 if args.no_cuda else torch_xla.device_count()


class Trainer:
    def __init__(self, model):
        self.n_gpu = torch_xla.device_count()
        self.model = model.to(torch_xla.device())
        # TODO(xla-migrate): XLA610 `self.n_gpu > 1 and not args.no_cuda` guards `nn.parallel.DataParallel`, which replicates over CUDA devices only (on XLA it wraps the model without replicating it, `device_ids=[]`, and adds `module.` to its state_dict keys): the check is now `False`; to train on several XLA devices, run one process per device (`--target multiprocess`: `torch_xla.launch` and DDP, https://docs.pytorch.org/xla/master/perf/ddp.html) or use SPMD (`--target spmd`)
        if False and not args.no_cuda:
            self.model = nn.parallel.DataParallel(self.model, device_ids=list(range(self.n_gpu)))


def build(model):
    # TODO(xla-migrate): XLA610 `torch.cuda.device_count() > 1` guards `nn.DataParallel`, which replicates over CUDA devices only (on XLA it wraps the model without replicating it, `device_ids=[]`, and adds `module.` to its state_dict keys): the check is now `False`; to train on several XLA devices, run one process per device (`--target multiprocess`: `torch_xla.launch` and DDP, https://docs.pytorch.org/xla/master/perf/ddp.html) or use SPMD (`--target spmd`)
    if False:
        print("Let's use", torch_xla.device_count(), "GPUs!")
        model = nn.DataParallel(model)
    model = model.to(torch_xla.device())
    # TODO(xla-migrate): XLA610 `args.n_gpu > 1` guards `torch.nn.DataParallel`, which replicates over CUDA devices only (on XLA it wraps the model without replicating it, `device_ids=[]`, and adds `module.` to its state_dict keys): the check is now `False`; to train on several XLA devices, run one process per device (`--target multiprocess`: `torch_xla.launch` and DDP, https://docs.pytorch.org/xla/master/perf/ddp.html) or use SPMD (`--target spmd`)
    if False:
        model = torch.nn.DataParallel(model, device_ids=[0, 1], output_device=0)
    # TODO(xla-migrate): XLA610 `torch.cuda.device_count() >= 2` guards `DataParallel`, which replicates over CUDA devices only (on XLA it wraps the model without replicating it, `device_ids=[]`, and adds `module.` to its state_dict keys): the check is now `False`; to train on several XLA devices, run one process per device (`--target multiprocess`: `torch_xla.launch` and DDP, https://docs.pytorch.org/xla/master/perf/ddp.html) or use SPMD (`--target spmd`)
    wrapped = DataParallel(model) if False else model
    batch_size = args.per_gpu_batch_size * max(1, args.n_gpu)
    return wrapped, batch_size
