# fixture: unsafe-fixes
"""torch.compile for GPUs: the inductor backend, its tuning modes, CUDA graphs, and decorators. [XLA810]"""

import torch


model = torch.nn.Linear(8, 8)
compiled = torch.compile(model, backend="openxla")
explicit = torch.compile(model, backend="openxla", fullgraph=True)
# TODO(xla-migrate): XLA810 `mode="max-autotune"` tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no XLA meaning: compile with `torch.compile(..., backend="openxla")` and no mode / options, or drop `torch.compile` (XLA compiles the training step anyway); see https://docs.pytorch.org/xla/master/perf/dynamo.html
tuned = torch.compile(model, mode="max-autotune")
# TODO(xla-migrate): XLA810 `mode="reduce-overhead"` tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no XLA meaning: compile with `torch.compile(..., backend="openxla")` and no mode / options, or drop `torch.compile` (XLA compiles the training step anyway); see https://docs.pytorch.org/xla/master/perf/dynamo.html
overhead = torch.compile(
    model,
    mode="reduce-overhead",
)
# TODO(xla-migrate): XLA810 `backend="cudagraphs"` tunes torch.compile for NVIDIA GPUs (CUDA graphs, Triton autotuning) and has no XLA meaning: compile with `torch.compile(..., backend="openxla")` and no mode / options, or drop `torch.compile` (XLA compiles the training step anyway); see https://docs.pytorch.org/xla/master/perf/dynamo.html
graphs = torch.compile(model, backend="cudagraphs")


@torch.compile(backend="openxla")
def step(x):
    return model(x).sum()


@torch.compile(dynamic=False, backend="openxla")
def loss_fn(x, y):
    return torch.nn.functional.mse_loss(model(x), y)
