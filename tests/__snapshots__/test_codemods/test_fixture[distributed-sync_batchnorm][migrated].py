"""Self-supervised trainers convert their model's batch norms for DDP (SimSiam, Barlow Twins), or
build a SyncBatchNorm themselves. [XLA105, XLA603, XLA613]"""

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, gpu):
    # TODO(xla-migrate): XLA613 `nn.SyncBatchNorm.convert_sync_batchnorm(model)`: torch.nn.SyncBatchNorm takes CUDA, XPU and PrivateUse1 tensors only: on the XLA device its forward raises once the process group is up ("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"), and torch_xla has no synchronised batch norm; the fix drops it: the model's BatchNorm layers then normalise each device's own batch: the same as SyncBatchNorm on one device, statistics of a per-device batch on several (make the per-device batch large enough, or all-reduce the statistics with `xm.all_reduce` in a BatchNorm of your own; https://docs.pytorch.org/xla/master/perf/ddp.html)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return DDP(model, gradient_as_bucket_view=True)


def projector(dims):
    # TODO(xla-migrate): XLA613 `nn.SyncBatchNorm(dims[1])`: torch.nn.SyncBatchNorm takes CUDA, XPU and PrivateUse1 tensors only: on the XLA device its forward raises once the process group is up ("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"), and torch_xla has no synchronised batch norm: use the BatchNorm of the input's rank; the model's BatchNorm layers then normalise each device's own batch: the same as SyncBatchNorm on one device, statistics of a per-device batch on several (make the per-device batch large enough, or all-reduce the statistics with `xm.all_reduce` in a BatchNorm of your own; https://docs.pytorch.org/xla/master/perf/ddp.html)
    layers = [nn.Linear(dims[0], dims[1], bias=False), nn.SyncBatchNorm(dims[1]), nn.ReLU()]
    return nn.Sequential(*layers)


def converted_copy(backbone):
    # TODO(xla-migrate): XLA613 `torch.nn.SyncBatchNorm.convert_sync_batchnorm(backbone)`: torch.nn.SyncBatchNorm takes CUDA, XPU and PrivateUse1 tensors only: on the XLA device its forward raises once the process group is up ("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"), and torch_xla has no synchronised batch norm; the fix keeps the model as it is: the model's BatchNorm layers then normalise each device's own batch: the same as SyncBatchNorm on one device, statistics of a per-device batch on several (make the per-device batch large enough, or all-reduce the statistics with `xm.all_reduce` in a BatchNorm of your own; https://docs.pytorch.org/xla/master/perf/ddp.html)
    synced = torch.nn.SyncBatchNorm.convert_sync_batchnorm(backbone)
    return synced
