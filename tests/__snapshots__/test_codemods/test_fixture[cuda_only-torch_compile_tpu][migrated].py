# fixture: runtime=torch-tpu unsafe-fixes
"""Under TorchTPU: torch.compile's inductor backend becomes TorchTPU's backend="tpu"; GPU tuning
(mode=, cudagraphs) is flagged. [XLA810]"""

import torch

model = torch.compile(torch.nn.Linear(8, 8), backend="tpu")
# TODO(xla-migrate): XLA810 `mode="max-autotune"` tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no TPU meaning: compile with `torch.compile(..., backend="tpu")` and no mode / options, or drop `torch.compile` (TorchTPU runs the model eagerly); see https://docs.pytorch.org/docs/stable/generated/torch.compile.html
tuned = torch.compile(torch.nn.Linear(8, 8), mode="max-autotune")
# TODO(xla-migrate): XLA810 `backend="cudagraphs"` tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no TPU meaning: compile with `torch.compile(..., backend="tpu")` and no mode / options, or drop `torch.compile` (TorchTPU runs the model eagerly); see https://docs.pytorch.org/docs/stable/generated/torch.compile.html
graphed = torch.compile(torch.nn.Linear(8, 8), backend="cudagraphs")


@torch.compile(backend="tpu")
def step(x):
    return x * 2
