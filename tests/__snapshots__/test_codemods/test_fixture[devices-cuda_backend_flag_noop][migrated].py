"""Backend switches that are not NVIDIA's; the cuDNN line below stays a comment."""

import torch
import torch_xla.backends

# torch.backends.cudnn.benchmark = True  (was here for the GPU)
torch.backends.mkldnn.enabled = True
torch.use_deterministic_algorithms(True)
torch_xla.backends.set_mat_mul_precision("highest")
