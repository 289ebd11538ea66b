"""What several modules of the instrumentation share: the optimizers that stepped, a
recorded value as the record holds it, and which frames are the instrumentation's own."""

from __future__ import annotations

import math

# this instrumentation's package (migrate_xla.verify.child): frames of its modules are not the script's
PACKAGE = __name__.rpartition(".")[0]


def _is_ours(module: str) -> bool:
    """Whether ``module`` (a frame's ``__name__``) is one of this package's."""
    return module == PACKAGE or module.startswith(PACKAGE + ".")


_live_optimizers: dict = {}  # every optimizer that stepped, in the order of its first step


def _as_float(tensor) -> float:
    value = tensor if isinstance(tensor, float) else float(tensor.float().cpu())
    return value if math.isfinite(value) else (str(value) if not math.isnan(value) else "nan")
