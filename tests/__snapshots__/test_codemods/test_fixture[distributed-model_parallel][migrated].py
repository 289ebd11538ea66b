"""FSDP, RPC, pipeline and tensor parallelism: flagged, never half-converted. [XLA608]"""

import torch.distributed.rpc as rpc
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.pipelining import pipeline
from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

# TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: use PyTorch/XLA's FSDP (`torch_xla.distributed.fsdp`, or FSDP via SPMD), see https://docs.pytorch.org/xla/master/perf/fsdp.html
model = FSDP(model, use_orig_params=True)
# TODO(xla-migrate): XLA608 `rpc.init_rpc` is `torch.distributed.rpc`: has no XLA counterpart: restructure as data parallelism or SPMD sharding, see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
rpc.init_rpc("worker", rank=rank, world_size=world_size)
# TODO(xla-migrate): XLA608 `init_device_mesh` is `torch.distributed.device_mesh`: build an `xs.Mesh` for SPMD instead, see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
mesh = init_device_mesh("cuda", (8,))
# TODO(xla-migrate): XLA608 `parallelize_module` is `torch.distributed.tensor`: shard with SPMD (`xs.mark_sharding` over an `xs.Mesh`), see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
model = parallelize_module(model, mesh, {"w1": ColwiseParallel()})
# TODO(xla-migrate): XLA608 `pipeline` is `torch.distributed.pipelining`: express the split as SPMD sharding over a device mesh, see https://docs.pytorch.org/xla/master/perf/spmd_basic.html
pipe = pipeline(model, mb_args=(x,))
