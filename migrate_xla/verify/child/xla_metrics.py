"""torch_xla's metrics in the XLA run: compilations and executions, CPU fallbacks, the ordinal."""

from __future__ import annotations

import sys


def _xla_counts() -> tuple[int, int]:
    import torch_xla.debug.metrics as met

    compile_data = met.metric_data("CompileTime")
    # SPMD runs its graphs replicated over the devices and counts them apart
    executions = sum((met.metric_data(name) or (0,))[0] for name in ("ExecuteTime", "ExecuteReplicatedTime"))
    return (compile_data[0] if compile_data else 0), executions


def _xla_metrics() -> dict:
    import torch_xla.debug.metrics as met

    compilations, executions = _xla_counts()
    # .item() shows up as aten::_local_scalar_dense: a host transfer, not a missing lowering.
    fallbacks = {
        name: met.counter_value(name)
        for name in met.counter_names()
        if name.startswith("aten::") and name != "aten::_local_scalar_dense"
    }
    return {
        "compilations": compilations,
        "executions": executions,
        "host_transfers": met.counter_value("aten::_local_scalar_dense") or 0,
        "cpu_fallback_ops": fallbacks,
    }


def _xla_ordinal() -> int:
    try:
        import torch_xla.runtime as xr

        return xr.global_ordinal()
    except Exception:
        return 0


def _on_xla() -> bool:
    """Whether torch_xla runs in this process (a TorchTPU run makes it unimportable: None)."""
    return sys.modules.get("torch_xla") is not None
