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

The harness imports this module; it imports no torch.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from migrate_xla.verify.diagnosis import in_user_files
from migrate_xla.verify.frames import user_frame

GiB = 2**30


@dataclass(frozen=True)
class Tpu:
    """One TPU generation's published figures, per chip."""

    name: str
    peak_bf16_flops: float  # FLOP/s
    hbm_bytes: int
    hbm_bandwidth: float  # bytes/s
    mxu: int  # the MXU's width: its systolic array is mxu x mxu
    source: str  # the Google Cloud page the figures come from

    def describe(self) -> str:
        return (
            f"{self.name}: {self.peak_bf16_flops / 1e12:g} TFLOP/s bf16, {self.hbm_bytes / GiB:g} GiB HBM at "
            f"{self.hbm_bandwidth / 1e9:g} GB/s, MXU {self.mxu}x{self.mxu}"
        )


# Google Cloud's published specifications, per chip (docs/tpu_performance.md cites each page).
# Peak bf16 compute, HBM capacity and HBM bandwidth from the generation's page; the MXU is
# 128 x 128 up to v5p ("An MXU is composed of 128 x 128 multiply-accumulators in a systolic
# array", /tpu/docs/system-architecture-tpu-vm), 256 x 256 on v6e ("two 256x256
# matrix-multiply units", /tpu/docs/v6e). v5p's 95 GB and v6e's 32 GB are GiB in the
# comparison table of /tpu/docs/tpu7x.
TPUS = {
    "v4": Tpu("v4", 275e12, 32 * GiB, 1200e9, 128, "https://cloud.google.com/tpu/docs/v4"),
    "v5e": Tpu("v5e", 197e12, 16 * GiB, 819e9, 128, "https://cloud.google.com/tpu/docs/v5e"),
    "v5p": Tpu("v5p", 459e12, 95 * GiB, 2765e9, 128, "https://cloud.google.com/tpu/docs/v5p"),
    "v6e": Tpu("v6e", 918e12, 32 * GiB, 1638e9, 256, "https://cloud.google.com/tpu/docs/v6e"),
}
DEFAULT_TPU = "v5e"
SUBLANES = 8  # the rows of a vector register: XLA pads a matrix's rows to 8 (Cloud TPU performance guide)
# MXU passes a float32 product takes by its precision (XLA on TPU: bfloat16 1, 3 or 6 times)
PASSES = {"DEFAULT": 1, "HIGH": 3, "HIGHEST": 6}
MAX_FINDINGS = 8  # of each kind, the largest first: the report says how many more
BYTES = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2, "i64": 8, "ui64": 8, "i32": 4, "ui32": 4, "i16": 2, "ui16": 2}
FLOAT_NAMES = {"f64": "float64", "f32": "float32", "bf16": "bfloat16", "f16": "float16"}


class UnknownTpu(ValueError):
    pass


def generation(name: str) -> Tpu:
    """The TPU generation ``name`` (``v5e``, ...); an unknown name is an error that lists the known."""
    try:
        return TPUS[name.lower()]
    except KeyError:
        raise UnknownTpu(f"unknown TPU generation {name!r}: known are {', '.join(TPUS)}") from None


# -- the tiles ---------------------------------------------------------------------------------------------


def padded(size: int, tile: int) -> int:
    return -(-size // tile) * tile


def tile_waste(rows: int, depth: int, cols: int, mxu: int) -> float:
    """The share of the MXU's work that multiplies padding, for a (rows x depth) @ (depth x cols)
    product: depth and cols padded to the MXU's width, rows to the 8 sublanes."""
    useful = rows * depth * cols
    return 1 - useful / (padded(rows, SUBLANES) * padded(depth, mxu) * padded(cols, mxu))


# -- reading StableHLO ---------------------------------------------------------------------------------------

TENSOR = r"tensor<[^<>]*(?:<[^<>]*>)?[^<>]*>"
DOT = re.compile(
    rf"stablehlo\.dot_general %[\w#]+, %[\w#]+, (?:batching_dims = \[([\d, ]*)\] x \[([\d, ]*)\], )?"
    rf"contracting_dims = \[([\d, ]*)\] x \[([\d, ]*)\](.*?) : \(({TENSOR}), ({TENSOR})\) -> ({TENSOR})(.*)$"
)
PLAIN_DOT = re.compile(rf"stablehlo\.dot %[\w#]+, %[\w#]+(.*?) : \(({TENSOR}), ({TENSOR})\) -> ({TENSOR})(.*)$")
CONVOLUTION = re.compile(
    rf"stablehlo\.convolution\(%[\w#]+, %[\w#]+\) dim_numbers = \[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]"
    rf"(.*?) : \(({TENSOR}), ({TENSOR})\) -> ({TENSOR})(.*)$"
)
PRECISION = re.compile(r"precision(?: = \[| )(\w+)")
LOC_DEF = re.compile(r"^(#loc\d*) = (.*)$")
LOC_CALLER = re.compile(r"^\s+at (#loc\d*)\s*$")
LOC_USE = re.compile(r'(?:"([^"]*)"\((#loc\d*)\)|(#loc\d*))\s*$')
FILE_LOC = re.compile(r'^"?(.+?)"?:(\d+):\d+$')
ARG = re.compile(rf"(%arg\d+): ({TENSOR})")
ARG_USE = re.compile(r"%arg\d+\b")


def _shape(tensor: str) -> tuple[tuple[int, ...], str]:
    """``tensor<8x32xf32>`` -> ((8, 32), "f32")."""
    body = tensor[len("tensor<") : -1].split(",")[0]
    *dims, dtype = body.split("x")
    return tuple(int(d) for d in dims if d.isdigit()), dtype


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.replace(" ", "").split(",") if x]


class _Locations:
    """The ``#locN`` definitions of a module: each resolved to its Python stack."""

    def __init__(self, lines: list[str]) -> None:
        self.defs: dict[str, str] = {}
        self.callers: dict[str, str] = {}
        last = None
        for line in lines:
            if line.startswith("#loc"):
                found = LOC_DEF.match(line)
                if found:
                    last = found.group(1)
                    self.defs[last] = found.group(2).strip()
                continue
            caller = LOC_CALLER.match(line)
            if caller and last is not None:
                self.callers[last] = caller.group(1)
        self.cache: dict[str, list[dict]] = {}

    def stack(self, ref: str, depth: int = 0) -> list[dict]:
        """The frames of location ``ref``, innermost first (function, file, line)."""
        if ref in self.cache:
            return self.cache[ref]
        frames: list[dict] = []
        value = self.defs.get(ref, "")
        if depth < 200 and value:
            if ref in self.callers:  # a call site: the callee's frames, then the caller's
                frames = self.stack(value, depth + 1) + self.stack(self.callers[ref], depth + 1)
            elif value.startswith("#loc"):
                frames = self.stack(value, depth + 1)
            elif value.startswith('"'):
                name, _, rest = value[1:].partition('"')
                inner = rest.strip()[1:-1] if rest.strip().startswith("(") else ""
                if inner.startswith("#loc"):
                    frames = self.stack(inner, depth + 1)
                    if frames and not frames[0].get("function") and not name.startswith(("aten__", "xla__")):
                        frames = [{**frames[0], "function": name}, *frames[1:]]
                else:
                    found = FILE_LOC.match(inner)
                    if found:
                        frames = [{"function": name, "file": found.group(1), "line": int(found.group(2))}]
            else:
                found = FILE_LOC.match(value)
                if found:
                    frames = [{"function": None, "file": found.group(1), "line": int(found.group(2))}]
        self.cache[ref] = frames
        return frames

    def of(self, tail: str) -> list[dict]:
        """The stack of an operation from the location at the end of its line."""
        found = LOC_USE.search(tail)
        if not found:
            return []
        return self.stack(found.group(2) or found.group(3))


def parse_stablehlo(text: str) -> dict:
    """The matrix-unit operations of a lowered graph, its inputs read and outputs written.

    ``ops``: each ``dot_general``/``dot``/``convolution`` as ``kind``, ``dtype`` (its left
    operand's), ``precision``, ``lhs``/``rhs``/``out`` shapes, ``flops``, the MXU product it
    makes ``rows`` x ``depth`` @ ``depth`` x ``cols``, ``repeat`` times (batch dimensions,
    kernel positions), and its Python ``stack`` (innermost first; [] where none was recorded).
    ``inputs``/``outputs``: (shape, dtype) of the parameters some operation reads and of the
    results that are not a parameter passed through. ``operations``: how many there are."""
    lines = text.splitlines()
    locations = _Locations(lines)
    ops, uses, operations = [], set(), 0
    signature, returned = "", []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("func.func @main("):
            signature = stripped
            continue
        if stripped.startswith("return "):
            returned = [value.strip() for value in stripped[len("return ") :].split(" : ")[0].split(",")]
            continue
        if not stripped.startswith("%"):
            continue
        operations += 1
        uses.update(ARG_USE.findall(stripped.split(" = ", 1)[-1]))
        op = _matrix_op(stripped, locations)
        if op is not None:
            ops.append(op)
    arguments, results = _signature(signature)
    inputs = [arguments[name] for name in arguments if name in uses]
    outputs = [result for value, result in zip(returned, results) if not value.startswith("%arg")]
    return {"ops": ops, "inputs": inputs, "outputs": outputs, "operations": operations}


def _signature(line: str) -> tuple[dict[str, tuple], list[tuple]]:
    head, arrow, tail = line.partition(") -> ")
    arguments = {name: _shape(tensor) for name, tensor in ARG.findall(head)}
    results = [_shape(tensor) for tensor in re.findall(TENSOR, tail)] if arrow else []
    return arguments, results


def _matrix_op(line: str, locations: _Locations) -> dict | None:
    found = DOT.search(line)
    if found:
        lhs_batch, rhs_batch, lhs_contract, rhs_contract = (_numbers(found.group(i) or "") for i in range(1, 5))
        (lhs, dtype), (rhs, _), (out, _) = (_shape(found.group(i)) for i in (6, 7, 8))
        depth = math.prod(lhs[i] for i in lhs_contract)
        repeat = math.prod(lhs[i] for i in lhs_batch)
        rows = math.prod(size for i, size in enumerate(lhs) if i not in lhs_batch and i not in lhs_contract)
        cols = math.prod(size for i, size in enumerate(rhs) if i not in rhs_batch and i not in rhs_contract)
        return _op("dot", dtype, found.group(5), lhs, rhs, out, rows, depth, cols, repeat, locations.of(found.group(9)))
    found = PLAIN_DOT.search(line)
    if found:
        (lhs, dtype), (rhs, _), (out, _) = (_shape(found.group(i)) for i in (2, 3, 4))
        rows = lhs[0] if len(lhs) == 2 else 1
        cols = rhs[1] if len(rhs) == 2 else 1
        return _op("dot", dtype, found.group(1), lhs, rhs, out, rows, lhs[-1], cols, 1, locations.of(found.group(5)))
    found = CONVOLUTION.search(line)
    if found:
        kernel_labels = [label.strip() for label in found.group(2).split(",")]
        out_labels = [label.strip() for label in found.group(3).split(",")]
        (lhs, dtype), (rhs, _), (out, _) = (_shape(found.group(i)) for i in (5, 6, 7))
        attributes = found.group(4)
        groups = re.search(r"feature_group_count = (\d+)", attributes)
        groups = int(groups.group(1)) if groups else 1
        depth = rhs[kernel_labels.index("i")]
        out_features = out[out_labels.index("f")]
        taps = math.prod(size for label, size in zip(kernel_labels, rhs) if label not in ("i", "o"))
        rows = math.prod(out) // out_features
        return _op(
            "convolution", dtype, attributes, lhs, rhs, out, rows, depth, out_features // groups, taps * groups,
            locations.of(found.group(8)),
        )  # fmt: skip
    return None


def _op(kind, dtype, attributes, lhs, rhs, out, rows, depth, cols, repeat, stack) -> dict:
    precision = PRECISION.search(attributes or "")
    return {
        "kind": kind,
        "dtype": dtype,
        "precision": precision.group(1) if precision else "DEFAULT",
        "lhs": list(lhs),
        "rhs": list(rhs),
        "out": list(out),
        "rows": rows,
        "depth": depth,
        "cols": cols,
        "repeat": repeat,
        "flops": 2 * rows * depth * cols * repeat,
        "stack": stack,
    }


# -- torch_xla's debug output -------------------------------------------------------------------------------

WINDOW = re.compile(r"^xla-migrate tpu-report window open.*?$(.*?)^xla-migrate tpu-report window close", re.S | re.M)
EXECUTION = re.compile(r"^Execution Analysis: Execution Cause\n(.*?)^Execution Analysis: -{10,}", re.S | re.M)
GRAPH_HASH = re.compile(r"Graph Hash: (\w+)")
DEBUG_FRAME = re.compile(r"^\w+ Analysis:\s+(\S+) \((.+):(\d+)\)$", re.M)
POST_COMPILATION = re.compile(
    r"^Post Compilation Analysis: (Graph input|Graph output|Aliased Input|Intermediate tensor) size: ([\d.]+) GB", re.M
)


def read_debug(text: str) -> dict:
    """Of torch_xla's debug output (PT_XLA_DEBUG_LEVEL=2): the graph executions in the window
    (hash, cause, stack) and the memory of every compiled graph by hash (bytes of inputs,
    outputs, inputs aliased to outputs, intermediate tensors)."""
    executions = []
    window = WINDOW.search(text)
    if window:
        for block in EXECUTION.finditer(window.group(1)):
            body = block.group(1)
            cause = body.splitlines()[0].removeprefix("Execution Analysis:").strip() if body else ""
            found = GRAPH_HASH.search(body)
            stack = [{"function": f, "file": file, "line": int(line)} for f, file, line in DEBUG_FRAME.findall(body)]
            executions.append({"hash": found.group(1) if found else None, "cause": cause, "stack": stack[::-1]})
    memory: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("Compilation Analysis:") and "Graph Hash:" in line:
            current = GRAPH_HASH.search(line).group(1)
            memory[current] = {}
        elif current is not None and line.startswith("Post Compilation Analysis:"):
            found = POST_COMPILATION.match(line)
            if found:
                key = {"Graph input": "input", "Graph output": "output", "Aliased Input": "aliased"}.get(
                    found.group(1), "intermediate"
                )
                memory[current][key] = int(float(found.group(2)) * 1e9)
    return {"executions": executions, "window_seen": window is not None, "memory": memory}


def collect(capture: dict | None, folder: Path, debug_text: str) -> dict | None:
    """The child's capture (child/tpu_capture.py) with its graphs read from ``folder`` (the
    run's temporary records) and what torch_xla's debug output says of the window."""
    if not capture:
        return None
    started = time.perf_counter()
    graphs = []
    for graph in capture.get("graphs", []):
        try:
            text = (folder / graph["file"]).read_text(errors="replace")
        except OSError:
            continue
        graphs.append({**{key: graph.get(key) for key in ("trigger", "what", "stack")}, **parse_stablehlo(text)})
    debug = read_debug(debug_text) if debug_text else None
    return {**capture, "graphs": graphs, "debug": debug, "read_s": time.perf_counter() - started}


def in_user_lines(collected: dict | None, originals: dict[Path, Path]) -> dict | None:
    """``collected`` with every stack told in the user's own files and lines, not the migrated copies'."""
    if not collected:
        return collected

    def moved(stack: list[dict]) -> list[dict]:
        return in_user_files(stack, originals) if stack else stack

    graphs = [
        {
            **graph,
            "stack": moved(graph.get("stack") or []),
            "ops": [{**op, "stack": moved(op["stack"])} for op in graph["ops"]],
        }
        for graph in collected["graphs"]
    ]
    sites = [{**site, "stack": moved(site["stack"])} for site in collected.get("sites", [])]
    debug = collected.get("debug")
    if debug:
        debug = {**debug, "executions": [{**e, "stack": moved(e["stack"])} for e in debug["executions"]]}
    return {**collected, "graphs": graphs, "sites": sites, "debug": debug}


# -- the report ------------------------------------------------------------------------------------------


def _native(dtype: str, float64: bool, matrix_dtype: str | None = None) -> str:
    """The element type the script computes in, for one the run computed in: in float64 mode a
    float64 matrix product is the script's ``matrix_dtype`` (its autocast's, else float32) and
    any other float64 is float32."""
    if float64 and dtype == "f64":
        return matrix_dtype or "f32"
    return dtype


def _bytes(tensors: list, float64: bool) -> int:
    return sum(math.prod(shape) * BYTES.get(_native(dtype, float64), 1) for shape, dtype in tensors)


def _where(frame: dict | None) -> str:
    return f"{Path(frame['file']).name}:{frame['line']}" if frame else "(no line)"


@dataclass(eq=False)
class _Site:
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


def _sites(ops: list[dict], tpu: Tpu, matrix_dtype: str | None, float64: bool) -> tuple[list[_Site], int]:
    """The operations by the user's line: a forward operation by the innermost user frame of
    its stack; a backward one (no stack) to the forward site of the same dimensions (the same
    sizes among its operands and result, as dX and dW of a linear layer have), the one with
    the least backward work so far where several have them. Returns the sites and the FLOPs
    of the operations no site took."""
    sites: dict[tuple, _Site] = {}
    by_signature: dict[tuple, list[_Site]] = {}
    backward = []
    for op in ops:
        frame = user_frame(op["stack"]) or (op["stack"][0] if op["stack"] else None)
        if frame is None:
            backward.append(op)
            continue
        key = (frame["file"], frame["line"], op["kind"])  # a line may call a convolution and a linear layer
        site = sites.get(key)
        if site is None:
            site = sites[key] = _Site(frame["file"], frame["line"], frame.get("function"), op["kind"], op)
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
    sites, unplaced = _sites(ops, tpu, matrix_dtype, float64)
    flops = sum(op["flops"] for op in ops)
    passes = sum(site.passes for site in sites) + unplaced
    float32 = sum(site.float32 for site in sites)
    step_bytes = sum(_bytes(g["inputs"], float64) + _bytes(g["outputs"], float64) for g in graphs)
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
        "transfers": _transfers(collected),
        "memory": _memory(collected, debug, executions, tpu, float64),
        "batch": _batch(collected),
        "recompilations": run.recompilations or 0,
    }
    report.update(available=True, step=step)
    report["findings"] = (
        _tile_findings(sites, flops, tpu)
        + _float32_findings(sites, flops)
        + _batch_findings(sites, step["batch"], tpu)
        + _graph_findings(graphs)
        + _recompilation_findings(run)
        + _transfer_findings(collected, step["transfers"])
        + _memory_findings(step["memory"], tpu)
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
        devices = collected["spmd_devices"]
        notes.append(
            f"the run is SPMD over {devices} devices: its graphs are the whole program before XLA partitions "
            f"it, so with the batch sharded each chip computes about 1/{devices} of these FLOPs and rows"
        )
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


def _transfers(collected: dict) -> dict:
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


def _memory(collected: dict, debug: dict, executions: list[dict], tpu: Tpu, float64: bool) -> dict:
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


def _batch(collected: dict) -> int | None:
    """The per-device batch: the first dimension of the largest data the step moves to the device
    (MpDeviceLoader's batches first)."""
    loader = collected.get("loader") or {}
    if loader.get("shape"):
        return loader["shape"][0]
    moved = [s for s in collected.get("sites", []) if s["direction"] == "to_device" and s.get("shape")]
    if not moved:
        return None
    return max(moved, key=lambda s: s["native_bytes"] / max(s["count"], 1))["shape"][0]


# -- findings ---------------------------------------------------------------------------------------------


def _finding(kind: str, message: str, frame: dict | None, **numbers) -> dict:
    where = frame or {}
    return {"kind": kind, "message": message, "file": where.get("file"), "line": where.get("line"), **numbers}


def _site_frame(site: _Site) -> dict | None:
    return {"file": site.file, "line": site.line} if site.file else None


def _limited(findings: list[dict], kind: str, what: str) -> list[dict]:
    if len(findings) <= MAX_FINDINGS:
        return findings
    rest = len(findings) - MAX_FINDINGS
    return [*findings[:MAX_FINDINGS], _finding(kind, f"and {rest} more {what} (the JSON report lists every one)", None)]


def _tile_findings(sites: list[_Site], flops: int, tpu: Tpu) -> list[dict]:
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


def _float32_findings(sites: list[_Site], flops: int) -> list[dict]:
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


def _batch_findings(sites: list[_Site], batch: int | None, tpu: Tpu) -> list[dict]:
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


def _graph_findings(graphs: list[dict]) -> list[dict]:
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


def _recompilation_findings(run) -> list[dict]:
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


def _transfer_findings(collected: dict, totals: dict) -> list[dict]:
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


def _memory_findings(memory: dict, tpu: Tpu) -> list[dict]:
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


# -- text --------------------------------------------------------------------------------------------------


def size_text(count: float) -> str:
    """A byte count as the reports write it: 1.15 kB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{int(count)} B"


def _time(seconds: float) -> str:
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
        f"  at least {_time(step['lower_bound_s'])} a step on {tpu.name} ({step['bound']}-bound: MXU "
        f"{_time(step['compute_s'])} with padding, HBM {_time(step['memory_s'])}): MXU utilization at most "
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
