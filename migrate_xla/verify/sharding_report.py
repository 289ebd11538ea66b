"""The sharding report of an SPMD run: what each device holds and what the step's graph moves
between the devices, so a user sees what the shardings cost before the pod.

Read from two things the migrated run leaves (issue 41):
- each parameter's layout as torch_xla holds it (the HLO sharding of the tensor, recorded at
  the TPU report's window by child/tpu_capture.py), with its gradient's and its optimizer
  state's, and the layout in mesh axes where xla-migrate's written functions kept it
  (``xla_partition_spec``); a device's share of a tensor is its bytes over the tiles its
  sharding cuts it into;
- the step's graph as XLA partitioned it: the harness has XLA dump the optimized HLO of the
  graphs an SPMD run compiles (``--xla_dump_to``), and the largest is the step's; its
  all-gathers, reduce-scatters, all-reduces, all-to-alls and collective permutes are counted
  with the bytes each produces. On XLA:CPU as here; a TPU's compiler may fuse or overlap some.
In float64 mode a float64 number counts the 4 bytes of the script's float32, as in the TPU report.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from migrate_xla.verify.tpu_render import size_text as _size

COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all", "collective-permute")
DUMP_FLAGS = "--xla_dump_to={folder} --xla_dump_hlo_as_text --xla_dump_hlo_module_re=SyncTensorsGraph"
GRAPH_FILES = "*SyncTensorsGraph*after_optimizations.txt"
TILES = re.compile(r"devices=\[([\d,]+)\]")
# An instruction's head: its name and result type (a tuple's in parentheses)
HEAD = r"^\s*(?:ROOT )?(?P<name>%\S+) = (?P<type>\([^=]*?\)|\S+) "
INSTRUCTION = re.compile(HEAD + r"(?P<op>" + "|".join(COLLECTIVES) + r")(?:-start)?\(", re.M)
SHAPE = re.compile(r"\b(pred|[suf]\d+|bf16|c64|c128)\[([\d,]*)\]")
# Any instruction, with its operands and attributes (dots' and convolutions' operands are named,
# their shapes given where those are defined)
DEFINITION = re.compile(HEAD + r"(?P<op>[\w\-]+)\((?P<args>[^)\n]*)\)(?P<attrs>[^\n]*)", re.M)
DIMS = re.compile(r"\[([\d,]*)\]")
BYTES = {"pred": 1, "bf16": 2, "c64": 8, "c128": 16}
SHOWN = 8  # the parameters the text names, the largest first; the JSON has them all


def dump_flags(folder: Path, flags: str | None) -> str:
    """XLA_FLAGS with the optimized graphs dumped to ``folder``, after the user's own flags."""
    return " ".join(filter(None, [flags, DUMP_FLAGS.format(folder=folder)]))


def _tile_dims(sharding: str) -> list[int] | None:
    """The tile assignment's dimensions of an HLO sharding (``{devices=[2,1,2]0,2,1,3 ...}``:
    ``[2, 1, 2]``); None for a replicated tensor ("{replicated}", or "" where nothing was marked)."""
    match = TILES.search(sharding or "")
    return [int(d) for d in match.group(1).split(",")] if match else None


def tiles(sharding: str) -> int:
    """Into how many pieces an HLO sharding (``{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}``)
    cuts a tensor: 1 for a replicated one ("{replicated}", or "" where nothing was marked)."""
    dims = _tile_dims(sharding)
    if dims is None:
        return 1
    return math.prod(dims[:-1] if "last_tile_dim" in sharding else dims)


def collect(capture: dict | None, dump: Path, float64: bool) -> dict | None:
    """The report, from the capture's layouts and the dumped graphs; None without SPMD."""
    if not capture or not capture.get("parameters"):
        return None
    totals = {"parameters": [0, 0], "gradients": [0, 0], "optimizer_state": [0, 0]}
    parameters = []
    for p in capture["parameters"]:
        share = -(-p["bytes"] // tiles(p["sharding"]))
        grad_bytes, grad_sharding = p.get("grad") or (p["bytes"], p["sharding"])  # none kept: the parameter's
        for key, whole, part in (
            ("parameters", p["bytes"], share),
            ("gradients", grad_bytes, -(-grad_bytes // tiles(grad_sharding))),
            *(("optimizer_state", b, -(-b // tiles(s))) for b, s in p.get("state", [])),
        ):
            totals[key][0] += whole
            totals[key][1] += part
        parameters.append(
            {
                "name": p["name"],
                "shape": p["shape"],
                "layout": p.get("axes") or _pieces(p["sharding"], len(p["shape"])),
                "sharding": p["sharding"],
                "bytes": p["bytes"],
                "bytes_per_device": share,
            }
        )
    parameters.sort(key=lambda p: -p["bytes"])
    return {
        "devices": capture.get("devices"),
        "mesh": capture.get("mesh"),
        "parameters": parameters,
        "held": {key: {"total": whole, "per_device": part} for key, (whole, part) in totals.items()},
        "step_graph": _collectives(dump, float64),
    }


def _pieces(sharding: str, rank: int) -> list | str:
    """A layout in pieces a dimension where no mesh axes were kept: ``[2, 1]`` (the first
    dimension in 2), or ``"replicated"``."""
    dims = _tile_dims(sharding)
    return "replicated" if dims is None else dims[:rank]


def _collectives(dump: Path, float64: bool) -> dict | None:
    """The collectives of the largest graph XLA compiled (the step's), with their bytes."""
    graphs = sorted(dump.glob(GRAPH_FILES), key=lambda f: f.stat().st_size) if dump.is_dir() else []
    if not graphs:
        return None
    counts = {op: {"count": 0, "bytes": 0} for op in COLLECTIVES}
    text = graphs[-1].read_text(errors="replace")
    for match in INSTRUCTION.finditer(text):
        entry = counts[match.group("op")]
        entry["count"] += 1
        entry["bytes"] += sum(_bytes(kind, dims, float64) for kind, dims in SHAPE.findall(match.group("type")))
    return {
        "graphs_compiled": len(graphs),
        "file": graphs[-1].name,
        "collectives": counts,
        "flops_per_device": matrix_flops(text),
    }


def matrix_flops(text: str) -> int:
    """The FLOPs of the dots and convolutions of one device's program (an HLO module's text, as
    XLA partitioned it): a dot's are twice its result's elements times its contracted size, a
    convolution's twice its result's elements times a window of the kernel's input features."""
    found = list(DEFINITION.finditer(text))
    shapes = {m.group("name"): _dims(m.group("type")) for m in found}
    flops = 0
    for m in found:
        op = m.group("op")
        if op not in ("dot", "convolution"):
            continue
        operands = [a.split()[-1] for a in m.group("args").split(",") if a.strip()]
        if op == "dot":
            contracted = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", m.group("attrs"))
            lhs = shapes.get(operands[0], [])
            size = math.prod(lhs[int(d)] for d in contracted.group(1).split(",") if d) if contracted and lhs else 1
        else:
            labels = re.search(r"dim_labels=\w+_(\w+)->", m.group("attrs"))
            kernel = shapes.get(operands[1], []) if len(operands) > 1 else []
            if not labels or len(kernel) != len(labels.group(1)):
                continue
            size = math.prod(kernel) // max(kernel[labels.group(1).index("o")], 1)
        flops += 2 * math.prod(shapes[m.group("name")]) * size
    return flops


def _dims(kind: str) -> list[int]:
    match = DIMS.search(kind)
    return [int(d) for d in match.group(1).split(",") if d] if match else []


def _bytes(kind: str, dims: str, float64: bool) -> int:
    size = BYTES.get(kind) or int(kind[1:]) // 8
    if float64 and kind == "f64":
        size = 4
    return size * math.prod(int(d) for d in dims.split(",") if d)


def render(report: dict | None) -> list[str]:
    """The report as verify's text shows it."""
    if not report:
        return []
    mesh = report.get("mesh") or {}
    on = f"mesh {tuple(mesh['shape'])} {tuple(mesh['axes']) or '(axes by position)'}" if mesh else "no global mesh"
    held = report["held"]
    lines = [
        f"sharding (SPMD over {report['devices']} devices, {on}; the migrated run's layouts and its step's graph "
        "as XLA partitioned it):",
        "  a device holds: "
        + ", ".join(
            f"{what.replace('_', ' ')} {_size(held[what]['per_device'])} of {_size(held[what]['total'])}"
            for what in ("parameters", "gradients", "optimizer_state")
        ),
    ]
    graph = report.get("step_graph")
    if graph:
        moved = [f"{c['count']} {op} ({_size(c['bytes'])})" for op, c in graph["collectives"].items() if c["count"]]
        lines.append(
            f"  the step's graph (the largest of {graph['graphs_compiled']} compiled): "
            + (", ".join(moved) if moved else "no collectives")
            + (
                f"; a device's matrix work {graph['flops_per_device'] / 1e9:.3g} GFLOP"
                if graph.get("flops_per_device")
                else ""
            )
        )
    for p in report["parameters"][:SHOWN]:
        lines.append(
            f"  {p['name']} {list(p['shape'])}: {_layout(p['layout'])}, {_size(p['bytes_per_device'])} a device "
            f"of {_size(p['bytes'])}"
        )
    if len(report["parameters"]) > SHOWN:
        lines.append(f"  ({len(report['parameters']) - SHOWN} smaller parameters in the JSON report)")
    return lines


def _layout(layout) -> str:
    """``(("dp", "tp"), None)`` as Python writes the partition spec (JSON made its tuples lists)."""
    if isinstance(layout, str):
        return layout
    return repr(tuple(tuple(axis) if isinstance(axis, list) else axis for axis in layout))
