"""What the XLA6xx rules share: the PyTorch/XLA guides their messages cite (a world size counted
with ``torch.cuda.device_count()`` is codemods/shared/launch_plan.py's)."""

from __future__ import annotations

DDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/ddp.html"
FSDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdp.html"
SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"
