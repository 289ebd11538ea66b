"""The TPU report: what a TPU would make of the migrated run's own graphs (docs/tpu_performance.md).

The migrated run on CPU PJRT compiles the graphs a TPU would run: the same HLO, lowered by
torch_xla from the same traced operations. For one step after the warm-up the run writes
them out with the Python stack of every operation (child/tpu_capture.py). Read here, without
running anything again:

- each matrix multiplication and convolution (StableHLO ``dot_general``, ``convolution``):
  its dimensions, element type and precision, and the user's line that traced it (the
  backward pass's carry no stack: each is given to the forward operation of the same
  dimensions);
- padding to the TPU's tiles: the MXU multiplies a K x N block of weights held in its
  systolic array by rows streamed through it, so XLA pads K and N to the MXU's width (128, or
  256 from v6e) and the rows M to the 8 sublanes; what the padding adds is wasted MXU work;
- float32 matrix multiplications: at XLA's DEFAULT precision the MXU rounds their operands to
  bfloat16, so float32 only doubles their bytes (HIGHEST takes 6 passes);
- the step's FLOPs (those of the matrix units) and bytes (the graphs' inputs read and outputs
  written once: the least traffic a step can have), and from the chosen TPU's published peak
  and HBM bandwidth (TPUS) a lower bound of the step's time and the MXU utilization it allows;
- whether the step fits the TPU's HBM: parameters, optimizer state and the step's own
  memory (torch_xla's account of the compiled graph: PT_XLA_DEBUG's post-compilation analysis);
- host-device transfers a step (torch_xla's counts, and where the script made them), graphs
  a step, graphs compiled after the warm-up and why (the run's compilation causes);
- the per-device batch, where the matrix multiplications' rows are fewer than the MXU's width.

Its parts: tpu_chips.py (the generations' figures and the tiles), tpu_graphs.py (reading
the captured graphs and torch_xla's debug output), tpu_costs.py (the step's FLOPs, bytes,
transfers and memory), tpu_findings.py, tpu_render.py (the table's lines); here, the report
is assembled (build).

The harness imports this module; it imports no torch.
"""

from __future__ import annotations

import time
from dataclasses import asdict

from migrate_xla.verify import tpu_costs
from migrate_xla.verify.tpu_chips import Tpu
from migrate_xla.verify.tpu_findings import (
    batch_findings,
    float32_findings,
    graph_findings,
    memory_findings,
    recompilation_findings,
    tile_findings,
    transfer_findings,
)
from migrate_xla.verify.tpu_render import size_text, time_text

FLOAT_NAMES = {"f64": "float64", "f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def build(collected: dict | None, run, tpu: Tpu, float64: bool, why_not: str | None = None) -> dict:
    """The report (the JSON's ``tpu_report``) of the migrated ``run`` (compare.Run) on ``tpu``,
    from its capture as ``collected`` and told in the user's lines (in_user_lines)."""
    started = time.perf_counter()
    report: dict = {"available": False, "tpu": {**asdict(tpu)}, "findings": [], "notes": []}
    if why_not is None and not collected:
        why_not = "the migrated run never reached the step the report reads" + (
            f" (it stopped after {run.steps_done} steps)" if run.steps_done else ""
        )
    if why_not is None and collected.get("skipped"):
        why_not = collected["skipped"]
    if why_not is None and collected.get("error") and not collected.get("graphs"):
        why_not = f"its capture in the migrated run failed: {collected['error']}"
    if why_not is not None:
        report["why_not"] = why_not
        return report
    graphs = [graph for graph in collected["graphs"] if graph["operations"]]
    matrix_dtype = {"bfloat16": "bf16", "float16": "f16"}.get(run.precision) if float64 else None
    ops = [op for graph in graphs for op in graph["ops"]]
    sites, unplaced = tpu_costs.sites(ops, tpu, matrix_dtype, float64)
    flops = sum(op["flops"] for op in ops)
    passes = sum(site.passes for site in sites) + unplaced
    float32 = sum(site.float32 for site in sites)
    step_bytes = sum(
        tpu_costs.tensor_bytes(g["inputs"], float64) + tpu_costs.tensor_bytes(g["outputs"], float64) for g in graphs
    )
    compute_s = passes / tpu.peak_bf16_flops
    memory_s = step_bytes / tpu.hbm_bandwidth
    lower = max(compute_s, memory_s)
    debug = collected.get("debug") or {}
    executions = debug.get("executions", [])
    window = collected.get("window", {})
    step = {
        "window": window,
        "graphs": len(executions) if debug.get("window_seen") else len(graphs),
        "graphs_captured": len(graphs),
        "flops": flops,
        "flops_float32": float32,
        "flops_unplaced": unplaced,
        "mxu_flops_with_padding": passes,
        "bytes": step_bytes,
        "compute_s": compute_s,
        "memory_s": memory_s,
        "lower_bound_s": lower,
        "bound": "compute" if compute_s >= memory_s else "memory",
        "mxu_utilization": flops / (lower * tpu.peak_bf16_flops) if lower else 0.0,
        "transfers": tpu_costs.transfers(collected),
        "memory": tpu_costs.memory(collected, debug, executions, tpu, float64),
        "batch": tpu_costs.batch(collected),
        "recompilations": run.recompilations or 0,
    }
    report.update(available=True, step=step)
    report["findings"] = (
        tile_findings(sites, flops, tpu)
        + float32_findings(sites, flops)
        + batch_findings(sites, step["batch"], tpu)
        + graph_findings(graphs)
        + recompilation_findings(run)
        + transfer_findings(collected, step["transfers"])
        + memory_findings(step["memory"], tpu)
    )
    notes = report["notes"]
    if float64:
        notes.append(
            "the run computed in float64 (verify's exactness check): its float64 numbers are counted as the "
            f"script's {FLOAT_NAMES[matrix_dtype or 'f32']} in matrix products"
            + (" (the autocast it asked for)" if matrix_dtype else "")
            + " and float32 elsewhere; memory figures are halved"
        )
    if collected.get("spmd_devices"):
        notes.append(_per_chip(step, collected["spmd_devices"], (getattr(run, "sharding", None) or {}), tpu))
    if step["graphs"] > len(graphs):
        notes.append(f"{step['graphs']} graphs ran in the step, {len(graphs)} of them captured")
    # what the report cost: the capture in the run (lowerings, the window's bookkeeping), reading
    # the graphs here, and this analysis (benchmarks/bench_tpu_report.py sets it against verify's time)
    report["cost_s"] = {
        "capture": collected.get("seconds", 0.0),
        "read": collected.get("read_s", 0.0),
        "analysis": time.perf_counter() - started,
    }
    if unplaced:
        notes.append(
            f"{unplaced / max(flops, 1):.0%} of the FLOPs are backward operations of no forward line's dimensions"
        )
    return report


def _per_chip(step: dict, devices: int, sharding: dict, tpu: Tpu) -> str:
    """What one chip of an SPMD run computes and holds: the dots and convolutions of the step's graph
    as XLA partitioned it, and its part of the parameters, gradients and optimizer state (the
    sharding report reads both); the report's other figures are the whole program's."""
    flops = (sharding.get("step_graph") or {}).get("flops_per_device")
    held = {what: figures["per_device"] for what, figures in (sharding.get("held") or {}).items()}
    if not flops:
        return (
            f"the run is SPMD over {devices} devices: its graphs are the whole program before XLA partitions "
            f"it, so with the batch sharded each chip computes about 1/{devices} of these FLOPs and rows"
        )
    step["per_chip"] = {"flops": flops, "compute_s": flops / tpu.peak_bf16_flops, "held": held}
    share = f", {flops / step['flops']:.0%} of the whole program's" if step["flops"] else ""
    parts = ", ".join(f"{what.replace('_', ' ')} {size_text(size)}" for what, size in held.items())
    holds = f"; it holds {parts} ({sum(held.values()) / tpu.hbm_bytes:.2%} of {tpu.name}'s HBM)" if held else ""
    return (
        f"the run is SPMD over {devices} devices: the figures above are the whole program's, before XLA "
        f"partitions it; a chip's part of the step as XLA partitioned it is {flops / 1e9:.3g} GFLOP in matrix "
        f"units{share}, at least {time_text(flops / tpu.peak_bf16_flops)} on {tpu.name} without padding{holds}"
    )
