"""The step's figures for the TPU report: its matrix operations by the user's line (FLOPs, MXU
work with the tiles' padding and float32's passes), its bytes, host transfers, memory and
per-device batch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from migrate_xla.verify.frames import user_frame
from migrate_xla.verify.tpu_chips import PASSES, SUBLANES, Tpu, padded

BYTES = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2, "i64": 8, "ui64": 8, "i32": 4, "ui32": 4, "i16": 2, "ui16": 2}


def _native(dtype: str, float64: bool, matrix_dtype: str | None = None) -> str:
    """The element type the script computes in, for one the run computed in: in float64 mode a
    float64 matrix product is the script's ``matrix_dtype`` (its autocast's, else float32) and
    any other float64 is float32."""
    if float64 and dtype == "f64":
        return matrix_dtype or "f32"
    return dtype


def tensor_bytes(tensors: list, float64: bool) -> int:
    return sum(math.prod(shape) * BYTES.get(_native(dtype, float64), 1) for shape, dtype in tensors)


@dataclass(eq=False)
class Site:
    """The matrix operations one line of the user's code traced, forward and backward."""

    file: str | None
    line: int | None
    function: str | None
    kind: str
    forward: dict  # its largest forward operation
    flops: int = 0
    padded: int = 0
    float32: int = 0
    passes: float = 0.0  # MXU work, padding and precision passes included, in FLOPs
    ops: int = 0
    backward: int = 0

    def add(self, op: dict, dtype: str, mxu: int) -> None:
        tiles = padded(op["rows"], SUBLANES) * padded(op["depth"], mxu) * padded(op["cols"], mxu)
        self.flops += op["flops"]
        self.padded += 2 * tiles * op["repeat"]
        passes = PASSES.get(op["precision"], 1) if dtype == "f32" else 1
        self.passes += 2 * tiles * op["repeat"] * passes
        self.float32 += op["flops"] if dtype == "f32" else 0
        self.ops += 1

    def dims(self) -> str:
        op = self.forward
        if self.kind == "convolution":
            return (
                f"convolution {'x'.join(map(str, op['lhs']))} * kernel {'x'.join(map(str, op['rhs']))}: "
                f"{op['depth']} input features to {op['cols']} output features, {op['rows']} positions"
            )
        batch = f"{op['repeat']} x " if op["repeat"] > 1 else ""
        return f"matmul {batch}({op['rows']}x{op['depth']}) @ ({op['depth']}x{op['cols']})"


def sites(ops: list[dict], tpu: Tpu, matrix_dtype: str | None, float64: bool) -> tuple[list[Site], int]:
    """The operations by the user's line: a forward operation by the innermost user frame of
    its stack; a backward one (no stack) to the forward site of the same dimensions (the same
    sizes among its operands and result, as dX and dW of a linear layer have), the one with
    the least backward work so far where several have them. Returns the sites and the FLOPs
    of the operations no site took."""
    sites: dict[tuple, Site] = {}
    by_signature: dict[tuple, list[Site]] = {}
    backward = []
    for op in ops:
        frame = user_frame(op["stack"]) or (op["stack"][0] if op["stack"] else None)
        if frame is None:
            backward.append(op)
            continue
        key = (frame["file"], frame["line"], op["kind"])  # a line may call a convolution and a linear layer
        site = sites.get(key)
        if site is None:
            site = sites[key] = Site(frame["file"], frame["line"], frame.get("function"), op["kind"], op)
        elif op["flops"] > site.forward["flops"]:
            site.forward = op
        site.add(op, _native(op["dtype"], float64, matrix_dtype), tpu.mxu)
        by_signature.setdefault(_signature_of(op), []).append(site)
    unplaced = 0
    for op in backward:
        candidates = list(dict.fromkeys(by_signature.get(_signature_of(op), [])))
        if not candidates:
            candidates = [s for s in sites.values() if s.forward["flops"] == op["flops"] and s.kind == op["kind"]]
        if not candidates:
            unplaced += op["flops"]
            continue
        site = min(candidates, key=lambda s: s.backward)
        site.add(op, _native(op["dtype"], float64, matrix_dtype), tpu.mxu)
        site.backward += op["flops"]
    return sorted(sites.values(), key=lambda s: -s.flops), unplaced


def _signature_of(op: dict) -> tuple[int, ...]:
    """The sizes of an operation's operands and result, unit dimensions aside: a forward matrix
    product and the two of its backward pass share them."""
    return tuple(sorted(size for shape in (op["lhs"], op["rhs"], op["out"]) for size in shape if size != 1))


def transfers(collected: dict) -> dict:
    """torch_xla's counts of the window, less what verify's instruments moved and float64
    mode's doubled host data (counted at the script's float32)."""
    moved = collected.get("transfers", {})
    sites = collected.get("sites", [])
    ours = collected.get("instrumentation", {})
    loader = collected.get("loader") or {}
    counts = {}
    for direction in ("to_device", "from_device"):
        extra = ours.get(direction, {}).get("bytes", 0)
        extra += sum(s["bytes"] - s["native_bytes"] for s in sites if s["direction"] == direction)
        fewer = ours.get(direction, {}).get("count", 0)
        if direction == "to_device":  # MpDeviceLoader's batches, moved ahead: one a step, below
            extra += moved.get("loader_raw_bytes", 0)
            fewer += moved.get("loader_batches", 0)
        counts[f"{direction}_bytes"] = max(0, moved.get(f"{direction}_bytes", 0) - extra)
        counts[f"{direction}_count"] = max(0, moved.get(f"{direction}_count", 0) - fewer)
    per_batch = loader["bytes"] // loader["batches"] if loader.get("batches") else None
    if per_batch is not None:
        counts["to_device_bytes"] += per_batch
        counts["to_device_count"] += 1
    return {**counts, "numbers_to_device": moved.get("numbers_to_device", 0), "loader_bytes_per_batch": per_batch}


def memory(collected: dict, debug: dict, executions: list[dict], tpu: Tpu, float64: bool) -> dict:
    state = collected.get("state") or {}
    scale = 0.5 if float64 else 1.0
    graph = 0
    for execution in executions:
        figures = debug.get("memory", {}).get(execution.get("hash"), {})
        if figures:
            need = figures.get("input", 0) + figures.get("output", 0) - figures.get("aliased", 0)
            graph = max(graph, int((need + figures.get("intermediate", 0)) * scale))
    parameters, optimizer = state.get("parameters", 0), state.get("optimizer", 0)
    total = max(graph, parameters + optimizer)
    return {
        "parameters": parameters,
        "optimizer_state": optimizer,
        "step_graph": graph or None,  # torch_xla's: its inputs, outputs (aliased once) and intermediates
        "total": total,
        "hbm": tpu.hbm_bytes,
        "share": total / tpu.hbm_bytes,
        "fits": total <= tpu.hbm_bytes,
    }


def batch(collected: dict) -> int | None:
    """The per-device batch: the first dimension of the largest data the step moves to the device
    (MpDeviceLoader's batches first)."""
    loader = collected.get("loader") or {}
    if loader.get("shape"):
        return loader["shape"][0]
    moved = [s for s in collected.get("sites", []) if s["direction"] == "to_device" and s.get("shape")]
    if not moved:
        return None
    return max(moved, key=lambda s: s["native_bytes"] / max(s["count"], 1))["shape"][0]
