"""The names of torch.cuda the CPU emulation refuses, found in the script before the reference runs.

The reference run without a GPU emulates CUDA on the CPU (child/cuda_emulation.py) as
migrate_xla/generated/cuda_api.py decides, name by name. A refused name (CUDA graphs, NCCL,
raw GPU pointers, ...) raises a clear error when the script uses it; better, verify says so
before it runs anything: :func:`scan` reads the script and the local modules it imports
(with ``ast``; nothing is imported or run) and finds every reference to a refused name,
resolving ``import torch``, ``import torch as t``, ``import torch.cuda as tc``, ``from torch
import cuda``, ``from torch.cuda import X`` (also inside functions) and attribute chains
on them (``torch.cuda.graphs.CUDAGraph``, ``tc.nccl.all_reduce``).

Where a GPU is there (:func:`gpu_present`: its driver, without importing torch) the
reference runs on it and nothing is refused.
"""

from __future__ import annotations

import ast
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from migrate_xla.generated import cuda_api
from migrate_xla.verify.project_copy import imported_files

MAX_SHOWN = 10  # refusals listed in the message; the rest are counted
# A GPU's driver on this machine: NVIDIA's (Linux, WSL through nvidia-smi) or ROCm's
GPU_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/kfd")


@dataclass(frozen=True)
class Refusal:
    """A reference, in the user's code, to a name the emulation refuses."""

    file: Path
    line: int
    qualname: str  # as the code names it: torch.cuda.graphs.CUDAGraph
    reason: str

    def message(self) -> str:
        return (
            f"{self.file}:{self.line}: the reference calls {self.qualname}, which cannot be emulated on the CPU "
            f"({self.reason})"
        )


def child_facts() -> dict:
    """What the child needs of cuda_api.py to emulate CUDA (it imports nothing of xla-migrate):
    the names it gives a meaning of its own (no-op, value, cpu; torch's own serves those
    kept), the refused ones with their reasons, and the names that are one object."""
    decisions = cuda_api.DECISIONS.items()
    return {
        "emulated": sorted(name for name, (kind, _) in decisions if kind in ("no-op", "value", "cpu")),
        "refused": {name: why for name, (kind, why) in decisions if kind == "refused"},
        "same_as": dict(cuda_api.SAME_AS),
    }


def gpu_present(env: dict[str, str]) -> bool:
    """Whether the reference will likely find a GPU (torch.cuda.is_available), told without
    importing torch: a GPU driver on this machine, and CUDA_VISIBLE_DEVICES not hiding it."""
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return False
    return any(os.path.exists(path) for path in GPU_DRIVER_FILES) or shutil.which("nvidia-smi") is not None


def scan(script: Path, root: Path) -> list[Refusal]:
    """The references to refused names of torch.cuda in ``script`` and in the modules under
    ``root`` (the project folder) it imports, directly or through each other."""
    script, root = script.resolve(), root.resolve()
    found: list[Refusal] = []
    for path in [script, *imported_files(script, [script.parent, root], root)]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue  # the run says what is wrong with it
        found.extend(_refusals(tree, path))
    return found


def explain(refusals: list[Refusal]) -> str:
    """The error verify stops with: each reference, then what can be done."""
    shown = [r.message() for r in refusals[:MAX_SHOWN]]
    if len(refusals) > MAX_SHOWN:
        shown.append(f"... and {len(refusals) - MAX_SHOWN} more")
    return (
        "the original script uses CUDA that verify's CPU emulation refuses, so its reference cannot run "
        "without a GPU:\n  " + "\n  ".join(shown) + "\nRecord the reference on a GPU machine "
        "(xla-migrate verify --save-reference trace.json ...) and verify against it with --reference trace.json"
    )


def _refusals(tree: ast.Module, path: Path) -> list[Refusal]:
    aliases = _aliases(tree)
    found: dict[tuple[int, str], Refusal] = {}

    def refuse(line: int, qualname: str) -> bool:
        # the refused name the reference reaches (torch.cuda.CUDAGraph of torch.cuda.CUDAGraph.replay)
        parts = qualname.split(".")
        for end in range(2, len(parts) + 1):
            name = ".".join(parts[:end])
            reason = cuda_api.refusal(name)
            if reason is not None:
                found.setdefault((line, name), Refusal(path, line, name, reason))
                return True
        return False

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*" and not refuse(node.lineno, f"{node.module}.{alias.name}"):
                    refuse(node.lineno, node.module)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                refuse(node.lineno, alias.name)
            return
        if isinstance(node, (ast.Attribute, ast.Name)):
            qualname = _qualname(node, aliases)
            if qualname is not None and refuse(node.lineno, qualname):
                return  # the outermost reference only: not torch.cuda.jiterator again inside it
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return sorted(found.values(), key=lambda r: (r.line, r.qualname))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound by imports of torch (anywhere in the file): the name they stand for."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch" or alias.name.startswith("torch."):
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "torch" or node.module.startswith("torch."):
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``tc.graphs.CUDAGraph`` -> ``torch.cuda.graphs.CUDAGraph`` after ``import torch.cuda as tc``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])
