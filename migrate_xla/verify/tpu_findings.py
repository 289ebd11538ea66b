"""The TPU report's findings, each at the user's line: matrix products off the tiles, float32
products, a thin batch, a step cut into several graphs, recompilations, host transfers and a
step that does not fit the chip's HBM."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from migrate_xla.verify.frames import user_frame
from migrate_xla.verify.tpu_chips import PASSES, SUBLANES, GiB, Tpu
from migrate_xla.verify.tpu_costs import Site
from migrate_xla.verify.tpu_render import size_text

MAX_FINDINGS = 8  # of each kind, the largest first: the report says how many more


def _where(frame: dict | None) -> str:
    return f"{Path(frame['file']).name}:{frame['line']}" if frame else "(no line)"


def _finding(kind: str, message: str, frame: dict | None, **numbers) -> dict:
    where = frame or {}
    return {"kind": kind, "message": message, "file": where.get("file"), "line": where.get("line"), **numbers}


def _site_frame(site: Site) -> dict | None:
    return {"file": site.file, "line": site.line} if site.file else None


def _limited(findings: list[dict], kind: str, what: str) -> list[dict]:
    if len(findings) <= MAX_FINDINGS:
        return findings
    rest = len(findings) - MAX_FINDINGS
    return [*findings[:MAX_FINDINGS], _finding(kind, f"and {rest} more {what} (the JSON report lists every one)", None)]


def tile_findings(sites: list[Site], flops: int, tpu: Tpu) -> list[dict]:
    found = []
    for site in sorted(sites, key=lambda s: -(s.padded - s.flops)):
        if not site.padded or site.padded == site.flops:
            continue
        op = site.forward
        off = [
            f"{name} {size}"
            for name, size, tile in (
                ("K", op["depth"], tpu.mxu),
                ("N", op["cols"], tpu.mxu),
                ("M", op["rows"], SUBLANES),
            )
            if size % tile
        ]
        waste = 1 - site.flops / site.padded
        found.append(
            _finding(
                "tile",
                f"{site.dims()}: {', '.join(off) or 'backward operands'} off the tiles (K and N multiples of the "
                f"MXU's {tpu.mxu}, M of {SUBLANES}): {waste:.0%} of its MXU work is padding, forward and backward "
                f"({site.flops / max(flops, 1):.0%} of the step's FLOPs)",
                _site_frame(site),
                waste_percent=round(100 * waste, 1),
                flops=site.flops,
                flops_share=site.flops / max(flops, 1),
                rows=op["rows"],
                depth=op["depth"],
                cols=op["cols"],
            )
        )
    return _limited(found, "tile", "lines off the tiles")


def float32_findings(sites: list[Site], flops: int) -> list[dict]:
    found = []
    for site in sorted(sites, key=lambda s: -s.float32):
        if not site.float32:
            continue
        precision = site.forward["precision"]
        cost = (
            "at XLA's DEFAULT precision the MXU multiplies bfloat16 anyway: bfloat16 operands give the same "
            "product from half the bytes"
            if PASSES.get(precision, 1) == 1
            else f"at {precision} precision the MXU takes {PASSES[precision]} bfloat16 passes for each product"
        )
        found.append(
            _finding(
                "float32",
                f"float32 {site.dims()}, {site.float32 / max(flops, 1):.0%} of the step's FLOPs: {cost} "
                "(torch.autocast('xla', dtype=torch.bfloat16))",
                _site_frame(site),
                flops=site.float32,
                flops_share=site.float32 / max(flops, 1),
                precision=precision,
            )
        )
    return _limited(found, "float32", "float32 lines")


def batch_findings(sites: list[Site], batch: int | None, tpu: Tpu) -> list[dict]:
    """Forward matrix products of the model (not convolutions: their rows are batch x
    positions) whose rows are fewer than the MXU's width."""
    thin = [s for s in sites if s.kind == "dot" and s.forward["rows"] < tpu.mxu and s.forward["repeat"] == 1]
    if not thin:
        return []
    site = max(thin, key=lambda s: s.flops)
    rows = site.forward["rows"]
    per_device = f"the per-device batch is {batch}: " if batch else ""
    return [
        _finding(
            "batch",
            f"{per_device}{site.dims()} has {rows} rows (batch x positions), fewer than the MXU's {tpu.mxu}: each "
            f"block of weights loaded into the MXU multiplies {rows} rows; {len(thin)} line(s) are so thin. Raise the "
            f"per-device batch to a multiple of {tpu.mxu} (or 8 with features a multiple of 128: Cloud TPU "
            "performance guide)",
            _site_frame(site),
            batch=batch,
            rows=rows,
        )
    ]


def graph_findings(graphs: list[dict]) -> list[dict]:
    """A step cut into more than one graph: each cut that is not the step's own sync."""
    found = []
    cuts = Counter()
    frames = {}
    for graph in graphs:
        if graph["trigger"] == "read":
            frame = user_frame(graph.get("stack") or [])
            key = (graph["what"], frame["file"] if frame else None, frame["line"] if frame else None)
            cuts[key] += 1
            frames[key] = frame
    for key, count in cuts.most_common():
        what, frame = key[0], frames[key]
        found.append(
            _finding(
                "graphs",
                f"the step runs {count} more graph(s) at a value read ({what}) at {_where(frame)}: each waits for "
                "the device in the middle of the step; read it after torch_xla.sync(), or every N steps",
                frame,
                count=count,
            )
        )
    syncs = [g for g in graphs if g["trigger"] == "sync"]
    if len(syncs) > 1:
        frame = user_frame(syncs[1].get("stack") or [])
        found.append(
            _finding(
                "graphs",
                f"the step is cut into {len(syncs)} graphs by torch_xla.sync() (one at {_where(frame)}): each graph "
                "is launched and waited for apart; one sync a step lets XLA fuse across the cut",
                frame,
                count=len(syncs),
            )
        )
    return found


def recompilation_findings(run) -> list[dict]:
    """The graphs compiled in the second half of the run, counted by cause and line (the
    diagnosis's recompilation finding, each cause apart)."""
    late = run.compile_causes[len(run.compile_causes) - run.recompilations :] if run.recompilations else []
    counted = Counter((c.get("cause", ""), c.get("file"), c.get("line")) for c in late)
    return [
        _finding(
            "recompilation",
            f"{count} graph(s) compiled after the warm-up ({cause}) at {_where({'file': file, 'line': line} if file else None)}: "
            "on a TPU each compilation takes seconds to minutes; fix the shapes (pad, drop_last=True) or the Python "
            "values that change between steps",
            {"file": file, "line": line} if file else None,
            count=count,
            cause=cause,
        )
        for (cause, file, line), count in counted.most_common()
    ]


ADVICE = {
    "from_device": "the host waits for the step's graph there; keep the value on the device and read it every N steps",
    "to": "the step waits for it: pl.MpDeviceLoader moves the next batch while the step runs",
    "MpDeviceLoader": "moved by MpDeviceLoader's thread while the step runs",
}


def transfer_findings(collected: dict, totals: dict) -> list[dict]:
    """The script's transfers of the step, by the user's line, direction and call, and what
    torch_xla counted beyond them."""
    by_line: dict[tuple, dict] = {}
    for site in collected.get("sites", []):
        frame = user_frame(site["stack"])
        key = (site["direction"], site["what"], frame["file"] if frame else None, frame["line"] if frame else None)
        into = by_line.setdefault(key, {**site, "frame": frame, "count": 0, "native_bytes": 0})
        into["count"] += site["count"]
        into["native_bytes"] += site["native_bytes"]
    loader = collected.get("loader") or {}
    if loader.get("batches"):
        by_line[("loader",)] = {
            "direction": "to_device",
            "what": "MpDeviceLoader",
            "frame": None,
            "count": 1,
            "native_bytes": loader["bytes"] // loader["batches"],
            "shape": loader["shape"],
        }
    for direction in ("to_device", "from_device"):
        named = sum(site["native_bytes"] for site in by_line.values() if site["direction"] == direction)
        count = sum(site["count"] for site in by_line.values() if site["direction"] == direction)
        rest, fewer = totals[f"{direction}_bytes"] - named, totals[f"{direction}_count"] - count
        if rest > 0 and fewer > 0:
            by_line[(direction,)] = {
                "direction": direction,
                "what": "no Python call of the script's: torch and torch_xla's own (constants, Python numbers)",
                "frame": None,
                "count": fewer,
                "native_bytes": rest,
                "shape": [],
            }
    found = []
    for site in sorted(by_line.values(), key=lambda s: -s["native_bytes"]):
        towards = "to the device" if site["direction"] == "to_device" else "from the device"
        shape = None if site.get("shape") is None else ("x".join(map(str, site["shape"])) or "a number")
        advice = ADVICE["from_device"] if site["direction"] == "from_device" else ADVICE.get(site["what"])
        found.append(
            _finding(
                "transfer",
                f"{size_text(site['native_bytes'])} a step {towards} in {site['count']} transfer(s) ({site['what']}"
                + (f", {shape})" if shape else ")")
                + (f": {advice}" if advice else ""),
                site["frame"],
                bytes=site["native_bytes"],
                count=site["count"],
                direction=site["direction"],
            )
        )
    return _limited(found, "transfer", "transfer sites")


def memory_findings(memory: dict, tpu: Tpu) -> list[dict]:
    if memory["fits"]:
        return []
    return [
        _finding(
            "memory",
            f"the step needs about {size_text(memory['total'])}, more than {tpu.name}'s {tpu.hbm_bytes / GiB:g} GiB of HBM: "
            "shard the model (SPMD, FSDP), lower the batch, or recompute activations (gradient checkpointing)",
            None,
            bytes=memory["total"],
        )
    ]
