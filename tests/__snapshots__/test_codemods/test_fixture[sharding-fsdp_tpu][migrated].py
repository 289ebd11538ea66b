# fixture: runtime=torch-tpu
"""Under TorchTPU a sharded script keeps its torch form (FSDP over the "tpu" process group):
the sharding rules stay out, XLA608 says what must name TorchTPU's device. [XLA602, XLA608]"""

import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from model import Net

dist.init_process_group("tpu")
# TODO(xla-migrate): XLA608 `FSDP` is `torch.distributed.fsdp`: under TorchTPU it shards over the `"tpu"` process group on the `tpu` device: place the module on `torch.device("tpu")` and build a mesh of the `"tpu"` device type (`init_device_mesh("tpu", ...)`; `torch.tpu.topology_aware_mesh` lays the ranks out along the chips' links); TorchTPU is beta, so check the sharded run on a TPU
model = FSDP(Net())
dist.destroy_process_group()
