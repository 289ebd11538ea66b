"""What the TPU report reads of the migrated run, in the parent: the StableHLO of the graphs
the child captured (each matrix-unit operation with its Python stack, the graphs' inputs and
outputs) and torch_xla's debug output of the captured window (executions, compiled memory)."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

from migrate_xla.verify.user_lines import in_user_files

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
