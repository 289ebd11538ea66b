"""What the XLA6xx rules share: the PyTorch/XLA guides their messages cite, and
``torch.cuda.device_count()`` as the world size."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule.api import FileContext

DDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/ddp.html"
FSDP_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdp.html"
SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"

DEVICE_COUNT = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})


def is_device_count(ctx: FileContext, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and ctx.qualname(node.func) in DEVICE_COUNT
