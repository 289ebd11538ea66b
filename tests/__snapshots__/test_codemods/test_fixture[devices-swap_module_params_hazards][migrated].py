"""Where swapping parameters cannot be made safe: a load after the DDP wrap, a file that turns it off. [XLA103, XLA109, XLA602, XLA603]"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla
import torch_xla.distributed.xla_backend

torch.__future__.set_swap_module_params_on_conversion(True)


def resume(model, checkpoint, rank):
    dist.init_process_group("xla", init_method="xla://")
    model = model.to(torch_xla.device())
    model = DDP(model, gradient_as_bucket_view=True)
    state = torch.load(checkpoint, map_location="cpu")
    # TODO(xla-migrate): XLA109 `model.module.load_state_dict(state["model"])` after the model was wrapped in DistributedDataParallel: with parameters swapped on conversion, load_state_dict swaps them too and raises while DDP holds them ("Expected use_count of t1 to be 1 or 2"); load the state dict before the DDP wrap
    model.module.load_state_dict(state["model"])  # after the wrap: DDP holds the parameters
    return model
