"""The TPU report as the verify table shows it, and byte counts and times as the reports
write them."""

from __future__ import annotations

from pathlib import Path

from migrate_xla.verify.tpu_chips import GiB, Tpu


def size_text(count: float) -> str:
    """A byte count as the reports write it: 1.15 kB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{int(count)} B"


def time_text(seconds: float) -> str:
    """A time as the reports write it: 217 µs."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def render(report: dict | None) -> list[str]:
    """The report as the verify table shows it."""
    if not report:
        return []
    tpu = Tpu(**report["tpu"])
    if not report["available"]:
        return [f"TPU report ({tpu.name}): none: {report.get('why_not', '')}"]
    step = report["step"]
    window = step["window"]
    at = f"step {window.get('from_step')} to {window.get('to_step') or 'the end'}"
    transfers, memory = step["transfers"], step["memory"]
    lines = [
        f"TPU report ({tpu.describe()}; the migrated run's graphs, {at}; docs/tpu_performance.md):",
        f"  a step: {step['graphs']} graph(s), {step['flops'] / 1e9:.3g} GFLOP in matrix units "
        f"({step['flops_float32'] / max(step['flops'], 1):.0%} float32), {size_text(step['bytes'])} read and written",
        f"  at least {time_text(step['lower_bound_s'])} a step on {tpu.name} ({step['bound']}-bound: MXU "
        f"{time_text(step['compute_s'])} with padding, HBM {time_text(step['memory_s'])}): MXU utilization at most "
        f"{step['mxu_utilization']:.1%}",
        f"  memory: parameters {size_text(memory['parameters'])}, optimizer state {size_text(memory['optimizer_state'])}"
        + (f", the step's graph {size_text(memory['step_graph'])}" if memory["step_graph"] else "")
        + f": {memory['share']:.2%} of {tpu.name}'s {tpu.hbm_bytes / GiB:g} GiB"
        + ("" if memory["fits"] else " (does not fit)"),
        f"  host transfers a step: {size_text(transfers['to_device_bytes'])} to the device in "
        f"{transfers['to_device_count']}, {size_text(transfers['from_device_bytes'])} from it in "
        f"{transfers['from_device_count']}"
        + (f"; per-device batch {step['batch']}" if step["batch"] else "")
        + (f"; {step['recompilations']} graph(s) compiled after the warm-up" if step["recompilations"] else ""),
    ]
    for note in report["notes"]:
        lines.append(f"  note: {note}")
    for finding in report["findings"]:
        where = f"{Path(finding['file']).name}:{finding['line']}: " if finding.get("file") else ""
        lines.append(f"  {finding['kind']}: {where}{finding['message']}")
    return lines
