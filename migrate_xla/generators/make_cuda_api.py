"""Generates ``migrate_xla/generated/cuda_api.py``: every public name of the installed torch's
``torch.cuda`` and what verify's CUDA emulation does with each:

    .venv/bin/python -m migrate_xla.generators.make_cuda_api     (or: make cuda-api)

The reference run without a GPU runs the original script on the CPU with CUDA emulated
(migrate_xla/verify/child/cuda_emulation.py). Each public name of ``torch.cuda`` gets a
decision, kept by hand in ``DECISIONS`` below: emulated (``kept``: torch's own works without
a GPU; ``no-op``; ``value``: a fixed answer; ``cpu``: a CPU meaning) or ``refused``, with
the reason, when it has no meaning on the CPU (CUDA graphs, NCCL, raw GPU pointers, ...).
A refused name raises a clear error when the reference uses it, and verify names it before
running (migrate_xla/verify/cuda_refusals.py).

Public, read from the installed torch (imported: this generator, alone of migrate_xla's
modules, needs torch): ``torch.cuda`` and every submodule, at any depth, whose name has no
part starting with ``_``; a module's public names are its ``__all__``, or where it has none
the names without a leading ``_`` of what the module itself defines (not modules, not what
it imported from elsewhere). A name that is the same object as another one (``torch.cuda.
memory_allocated`` is ``torch.cuda.memory.memory_allocated``) is decided once, under the
shortest of its names; a public module is a ``module`` (its names are decided one by one)
unless decided otherwise.

A public name nobody decided on, or a decision on a name torch no longer has, is an error:
torch adds names with its releases, and someone must decide on each.
tests/test_cuda_api.py regenerates the table and fails when it is not current.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import types
from typing import NamedTuple

from migrate_xla.generators.write import GENERATED, write_generated

TABLE = GENERATED / "cuda_api.py"
ROOT = "torch.cuda"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.make_cuda_api  (or: make cuda-api)"
LINE_LENGTH = 120  # [tool.ruff] line-length: the table is written as `ruff format` writes it

KEPT, NO_OP, VALUE, CPU, REFUSED, MODULE = "kept", "no-op", "value", "cpu", "refused", "module"
KINDS = {
    KEPT: "torch's own, which works without a GPU",
    NO_OP: "does nothing (returns None, or what is said)",
    VALUE: "returns a fixed, plausible value",
    CPU: "given a CPU meaning",
    REFUSED: "raises a clear error when used; verify names it before running",
    MODULE: "a public module: its names are decided one by one",
}
EMULATED_KINDS = (KEPT, NO_OP, VALUE, CPU)

_LEGACY = "torch's CPU typed tensor of the same name (the float ones torch.DoubleTensor in float64 mode)"
_STORAGE = "torch's CPU storage of the same name"
_SPARSE = "torch.sparse's CPU type of the same name"
_STAT = "0: the emulated device allocates nothing of its own (the CPU's memory is not counted)"
_RESET = "no statistics to reset"
_SEED = (
    "the emulated device's own generator (seeding it leaves the CPU generator, which both runs draw from, "
    "as on a GPU); torch.manual_seed seeds it too"
)
_GRAPHS = "CUDA graphs capture GPU kernels and replay them; the CPU runs each op as it comes and has nothing to capture"
_NCCL = (
    "NCCL collectives over a list of GPUs; the emulation has one device, and a process group's nccl backend is "
    "gloo there"
)
_COMM = "copies and reductions across several GPUs; the emulation has one device"
_GDS = "GPUDirect Storage reads files straight into GPU memory through cuFile"
_ALLOCATOR = "a GPU memory allocator loaded from a shared library"
_POINTER = "a raw pointer into GPU memory, for C extensions"
_TUNABLE = "TunableOp picks GEMM kernels on a GPU; nothing to tune on the CPU"
_NVTX = "NVTX annotations for a GPU profiler"
_PROFILER = "the CUDA profiler: nothing to profile on the CPU"

# The hand-kept decision on each public name (decided once under the shortest of its names):
# (kind, how it is emulated or why it is refused). Keep the texts free of double quotes.
DECISIONS: dict[str, tuple[str, str]] = {
    # legacy typed tensors and storages
    **{f"torch.cuda.{t}Tensor": (CPU, _LEGACY) for t in ("BFloat16", "Bool", "Byte", "Char", "Double")},
    **{f"torch.cuda.{t}Tensor": (CPU, _LEGACY) for t in ("Float", "Half", "Int", "Long", "Short")},
    **{f"torch.cuda.{t}Storage": (CPU, _STORAGE) for t in ("BFloat16", "Bool", "Byte", "Char", "Double")},
    **{f"torch.cuda.{t}Storage": (CPU, _STORAGE) for t in ("Float", "Half", "Int", "Long", "Short")},
    **{f"torch.cuda.Complex{t}Storage": (CPU, _STORAGE) for t in ("Double", "Float")},
    **{f"torch.cuda.sparse.{t}Tensor": (CPU, _SPARSE) for t in ("BFloat16", "Byte", "Char", "Double", "Float")},
    **{f"torch.cuda.sparse.{t}Tensor": (CPU, _SPARSE) for t in ("Half", "Int", "Long", "Short")},
    # the device
    "torch.cuda.is_available": (VALUE, "True for the script's own calls (torch's internals still see no GPU)"),
    "torch.cuda.device_count": (VALUE, "1 for the script's own calls (torch's internals still see no GPU)"),
    "torch.cuda.current_device": (VALUE, "0"),
    "torch.cuda.set_device": (NO_OP, "the one emulated device is always current"),
    "torch.cuda.device": (CPU, "a context (with torch.cuda.device(i):) in which the one device stays current"),
    "torch.cuda.device_of": (CPU, "a context, as torch.cuda.device"),
    "torch.cuda.init": (NO_OP, "nothing to initialize"),
    "torch.cuda.is_initialized": (VALUE, "True"),
    "torch.cuda.synchronize": (NO_OP, "the CPU computes in order: nothing to wait for"),
    "torch.cuda.ipc_collect": (NO_OP, "no memory shared between processes to collect"),
    # the one GPU model the emulated device is, an A100: EMULATED_GPU in verify/child/cuda_emulation.py, whose
    # answers tests/test_verify_wrappers.py checks against these texts
    "torch.cuda.get_device_name": (VALUE, "NVIDIA A100-SXM4-40GB, the one GPU model the emulated device is"),
    "torch.cuda.get_device_properties": (
        CPU,
        "the A100's: major 8, minor 0, 108 multiprocessors, total_memory its 40536 MiB or the host's memory where less",
    ),
    "torch.cuda.get_device_capability": (VALUE, "(8, 0), the A100's"),
    "torch.cuda.get_arch_list": (KEPT, "[] without a GPU"),
    "torch.cuda.get_gencode_flags": (KEPT, "an empty string without a GPU"),
    "torch.cuda.is_bf16_supported": (VALUE, "True, as on the A100 (CPU autocast computes in bfloat16)"),
    "torch.cuda.is_tf32_supported": (
        VALUE,
        "True, as on the A100 (the CPU computes float32 matmuls in float32 all the same)",
    ),
    "torch.cuda.can_device_access_peer": (VALUE, "False: one device, no peers"),
    "torch.cuda.has_half": (KEPT, "a flag"),
    "torch.cuda.has_magma": (KEPT, "a flag"),
    "torch.cuda.cudaStatus": (KEPT, "constants"),
    "torch.cuda.CudaError": (KEPT, "an exception class (never raised by the emulation)"),
    "torch.cuda.DeferredCudaCallError": (KEPT, "an exception class (never raised by the emulation)"),
    "torch.cuda.check_error": (NO_OP, "every call made through the emulation succeeds"),
    "torch.cuda.get_sync_debug_mode": (VALUE, "0"),
    "torch.cuda.set_sync_debug_mode": (NO_OP, "the CPU has no synchronizing calls to warn about"),
    "torch.cuda.cudart": (REFUSED, "the CUDA runtime library itself"),
    "torch.cuda.current_blas_handle": (REFUSED, "a cuBLAS handle, a pointer for C extensions"),
    # device monitoring (NVML)
    "torch.cuda.utilization": (VALUE, "0"),
    "torch.cuda.temperature": (VALUE, "0"),
    "torch.cuda.power_draw": (VALUE, "0"),
    "torch.cuda.clock_rate": (VALUE, "0"),
    "torch.cuda.memory_usage": (VALUE, "0"),
    "torch.cuda.device_memory_used": (VALUE, "0"),
    "torch.cuda.list_gpu_processes": (VALUE, "a report of no process"),
    # streams and events
    "torch.cuda.Stream": (
        CPU,
        "everything runs in order on the one CPU stream (wait_stream, record_event: nothing to wait for)",
    ),
    "torch.cuda.ExternalStream": (CPU, "a Stream as torch.cuda.Stream, the pointer given ignored"),
    "torch.cuda.get_stream_from_external": (CPU, "the default stream"),
    "torch.cuda.Event": (CPU, "recorded at once, timed by the wall clock (elapsed_time in milliseconds)"),
    "torch.cuda.StreamContext": (CPU, "a context that changes nothing"),
    "torch.cuda.stream": (CPU, "a context that changes nothing"),
    "torch.cuda.current_stream": (CPU, "the default stream"),
    "torch.cuda.default_stream": (CPU, "the default stream"),
    "torch.cuda.set_stream": (NO_OP, "one stream"),
    # random numbers
    "torch.cuda.manual_seed": (CPU, _SEED),
    "torch.cuda.manual_seed_all": (CPU, _SEED),
    "torch.cuda.seed": (CPU, _SEED),
    "torch.cuda.seed_all": (CPU, _SEED),
    "torch.cuda.initial_seed": (CPU, _SEED),
    "torch.cuda.get_rng_state": (CPU, _SEED),
    "torch.cuda.get_rng_state_all": (CPU, _SEED + "; a list of one state"),
    "torch.cuda.set_rng_state": (CPU, _SEED),
    "torch.cuda.set_rng_state_all": (CPU, _SEED + "; the first state of the list"),
    "torch.cuda.default_generators": (CPU, "a tuple of the emulated device's generator"),
    # memory
    "torch.cuda.empty_cache": (NO_OP, "no cache"),
    "torch.cuda.memory_allocated": (VALUE, _STAT),
    "torch.cuda.max_memory_allocated": (VALUE, _STAT),
    "torch.cuda.memory_reserved": (VALUE, _STAT),
    "torch.cuda.max_memory_reserved": (VALUE, _STAT),
    "torch.cuda.memory_cached": (VALUE, _STAT),
    "torch.cuda.max_memory_cached": (VALUE, _STAT),
    "torch.cuda.memory_stats": (VALUE, "a dict that reads 0 for every statistic"),
    "torch.cuda.host_memory_stats": (VALUE, "a dict that reads 0 for every statistic"),
    "torch.cuda.memory_stats_as_nested_dict": (VALUE, "an empty dict"),
    "torch.cuda.host_memory_stats_as_nested_dict": (VALUE, "an empty dict"),
    "torch.cuda.memory_summary": (VALUE, "a line saying that the emulated device counts no memory"),
    "torch.cuda.memory_snapshot": (VALUE, "an empty list"),
    "torch.cuda.mem_get_info": (
        CPU,
        "the A100's free and total memory (get_device_properties' total_memory), each capped at the host's, in bytes",
    ),
    "torch.cuda.reset_peak_memory_stats": (NO_OP, _RESET),
    "torch.cuda.reset_max_memory_allocated": (NO_OP, _RESET),
    "torch.cuda.reset_max_memory_cached": (NO_OP, _RESET),
    "torch.cuda.reset_accumulated_memory_stats": (NO_OP, _RESET),
    "torch.cuda.reset_peak_host_memory_stats": (NO_OP, _RESET),
    "torch.cuda.reset_accumulated_host_memory_stats": (NO_OP, _RESET),
    "torch.cuda.set_per_process_memory_fraction": (NO_OP, "no limit to set"),
    "torch.cuda.get_per_process_memory_fraction": (VALUE, "1.0"),
    "torch.cuda.get_allocator_backend": (VALUE, "native"),
    "torch.cuda.caching_allocator_enable": (NO_OP, "no allocator"),
    "torch.cuda.MemPool": (CPU, "a pool that holds nothing: where memory comes from does not change what is computed"),
    "torch.cuda.use_mem_pool": (CPU, "a context that changes nothing"),
    "torch.cuda.caching_allocator_alloc": (REFUSED, _POINTER),
    "torch.cuda.caching_allocator_delete": (REFUSED, _POINTER),
    "torch.cuda.CUDAPluggableAllocator": (REFUSED, _ALLOCATOR),
    "torch.cuda.change_current_allocator": (REFUSED, _ALLOCATOR),
    # CUDA graphs
    "torch.cuda.CUDAGraph": (REFUSED, _GRAPHS),
    "torch.cuda.graph": (REFUSED, _GRAPHS),
    "torch.cuda.graph_pool_handle": (REFUSED, _GRAPHS),
    "torch.cuda.is_current_stream_capturing": (VALUE, "False"),
    "torch.cuda.make_graphed_callables": (CPU, "the callables as given: a graph replays the same computation"),
    # automatic mixed precision
    "torch.cuda.amp.autocast": (CPU, "CPU autocast, float16 by default as CUDA's"),
    "torch.cuda.amp.GradScaler": (CPU, "torch.amp.GradScaler on the CPU"),
    "torch.cuda.amp.custom_fwd": (CPU, "torch.amp.custom_fwd for CPU autocast, the emulation's"),
    "torch.cuda.amp.custom_bwd": (CPU, "torch.amp.custom_bwd for CPU autocast, the emulation's"),
    "torch.cuda.amp.amp_definitely_not_available": (VALUE, "False: CPU autocast is there"),
    # annotations and profiling
    "torch.cuda.nvtx.mark": (NO_OP, _NVTX),
    "torch.cuda.nvtx.range_push": (NO_OP, _NVTX + "; returns 0"),
    "torch.cuda.nvtx.range_pop": (NO_OP, _NVTX + "; returns 0"),
    "torch.cuda.nvtx.range_start": (NO_OP, _NVTX + "; returns 0"),
    "torch.cuda.nvtx.range_end": (NO_OP, _NVTX),
    "torch.cuda.nvtx.range": (NO_OP, _NVTX + "; a context and a decorator that change nothing"),
    "torch.cuda.profiler.init": (NO_OP, _PROFILER),
    "torch.cuda.profiler.start": (NO_OP, _PROFILER),
    "torch.cuda.profiler.stop": (NO_OP, _PROFILER),
    "torch.cuda.profiler.profile": (NO_OP, _PROFILER + "; a context that changes nothing"),
    # TunableOp
    **{
        f"torch.cuda.tunable.{name}": (NO_OP, _TUNABLE)
        for name in (
            "enable",
            "tuning_enable",
            "record_untuned_enable",
            "set_filename",
            "set_max_tuning_duration",
            "set_max_tuning_iterations",
            "set_rotating_buffer_size",
            "tune_gemm_in_file",
            "mgpu_tune_gemm_in_file",
            "write_file_on_exit",
        )
    },
    **{
        f"torch.cuda.tunable.{name}": (VALUE, _TUNABLE + "; False")
        for name in ("is_enabled", "tuning_is_enabled", "record_untuned_is_enabled", "read_file", "write_file")
    },
    **{
        f"torch.cuda.tunable.{name}": (VALUE, _TUNABLE + "; 0")
        for name in ("get_max_tuning_duration", "get_max_tuning_iterations", "get_rotating_buffer_size")
    },
    "torch.cuda.tunable.get_filename": (VALUE, _TUNABLE + "; an empty string"),
    "torch.cuda.tunable.get_results": (VALUE, _TUNABLE + "; an empty tuple"),
    "torch.cuda.tunable.get_validators": (VALUE, _TUNABLE + "; an empty tuple"),
    # several GPUs, GPU-only libraries and kernels
    **{f"torch.cuda.nccl.{name}": (REFUSED, _NCCL) for name in ("all_gather", "all_reduce", "broadcast", "reduce")},
    "torch.cuda.nccl.reduce_scatter": (REFUSED, _NCCL),
    **{
        f"torch.cuda.comm.{name}": (REFUSED, _COMM)
        for name in ("broadcast", "broadcast_coalesced", "gather", "reduce_add", "reduce_add_coalesced", "scatter")
    },
    **{
        f"torch.cuda.gds.{name}": (REFUSED, _GDS)
        for name in ("GdsFile", "gds_register_buffer", "gds_deregister_buffer")
    },
    "torch.cuda.jiterator": (REFUSED, "the jiterator compiles CUDA C++ kernels at run time"),
}
MODULE_DECISION = (MODULE, KINDS[MODULE])


class CudaApi(NamedTuple):
    """What ``cuda_api.py`` records of the installed torch."""

    torch_version: str
    public_modules: dict[str, frozenset[str]]  # each public module: its public names
    same_as: dict[str, str]  # a name that is the same object as another: the name it is decided under


class TableError(Exception):
    """The decisions do not fit the installed torch; the message says which names and how to fix it."""


def collect(root: types.ModuleType, torch_version: str) -> CudaApi:
    """The public modules under ``root`` (a package), their public names, and the names that are one object."""
    modules = list(_public_modules(root))
    public: dict[str, frozenset[str]] = {}
    holders: dict[int, list[str]] = {}
    objects: dict[int, object] = {}  # keeps each object alive, so that no id is reused while collecting
    for module in modules:
        names = frozenset(_public_names(module))
        public[module.__name__] = names
        for name in names:
            value = getattr(module, name)
            if isinstance(value, types.ModuleType) or isinstance(value, (bool, int, float, str, bytes, type(None))):
                continue  # a module is decided by its own name; equal constants are not one object
            objects[id(value)] = value
            holders.setdefault(id(value), []).append(f"{module.__name__}.{name}")
    same_as = {}
    for names in holders.values():
        first, *others = sorted(names, key=lambda q: (q.count("."), q))
        same_as.update(dict.fromkeys(others, first))
    return CudaApi(torch_version, public, dict(sorted(same_as.items())))


def _public_modules(module: types.ModuleType):
    yield module
    for found in pkgutil.iter_modules(getattr(module, "__path__", ())):
        if not found.name.startswith("_"):
            yield from _public_modules(importlib.import_module(f"{module.__name__}.{found.name}"))


def _public_names(module: types.ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and (getattr(value, "__module__", None) or "").startswith(module.__name__)
    ]


def decisions_for(api: CudaApi, decisions: dict[str, tuple[str, str]] = DECISIONS) -> dict[str, tuple[str, str]]:
    """Every name to decide (each public name and module, aliases left to their first name) with
    its decision; raises TableError for a name undecided, or decided but not public (any more)."""
    root = min(api.public_modules, key=len)
    names = {f"{module}.{name}" for module, exported in api.public_modules.items() for name in exported}
    names |= set(api.public_modules) - {root}
    modules = set(api.public_modules)
    to_decide = {name for name in names if name not in api.same_as}
    problems = []
    undecided = sorted(name for name in to_decide if name not in decisions and name not in modules)
    if undecided:
        problems.append(
            f"{len(undecided)} public names of {root} have no decision: {', '.join(undecided)}; decide each in "
            "DECISIONS (migrate_xla/generators/make_cuda_api.py): emulated (how) or refused (why)"
        )
    aliases = sorted(name for name in decisions if name in api.same_as)
    if aliases:
        problems.append(
            "decided under a name that is the same object as a shorter one: "
            + ", ".join(f"{name} (decide {api.same_as[name]})" for name in aliases)
        )
    stale = sorted(name for name in decisions if name not in names)
    if stale:
        problems.append(f"decisions on names the installed torch does not have as public: {', '.join(stale)}")
    bad = sorted(
        name
        for name, (kind, text) in decisions.items()
        if kind not in KINDS or not text or '"' in text or "\\" in text or not text.isascii()
    )
    if bad:
        problems.append(f"decisions need a kind of {sorted(KINDS)} and a text without double quotes: {bad}")
    if problems:
        raise TableError("; ".join(problems))
    return {name: decisions.get(name, MODULE_DECISION) for name in sorted(to_decide)}


def _py(value: str) -> str:
    return json.dumps(value)


def _entry(key: str, kind: str, text: str) -> str:
    """One decision as ``ruff format`` writes it: on one line where it fits, else one element a line."""
    line = f"    {_py(key)}: ({_py(kind)}, {_py(text)}),\n"
    if len(line) - 1 <= LINE_LENGTH:
        return line
    return f"    {_py(key)}: (\n        {_py(kind)},\n        {_py(text)},\n    ),\n"


def table_text(api: CudaApi, decisions: dict[str, tuple[str, str]] = DECISIONS) -> str:
    """The text of ``cuda_api.py``, formatted as ``ruff format`` would."""
    decided = decisions_for(api, decisions)
    modules = "".join(
        f"    {_py(module)}: frozenset(\n        {{\n"
        + "".join(f"            {_py(name)},\n" for name in sorted(names))
        + "        }\n    ),\n"
        if names
        else f"    {_py(module)}: frozenset(),\n"
        for module, names in sorted(api.public_modules.items())
    )
    same_as = "".join(f"    {_py(alias)}: {_py(name)},\n" for alias, name in api.same_as.items())
    kinds = "".join(f"    {_py(kind)}: {_py(text)},\n" for kind, text in KINDS.items())
    table = "".join(_entry(name, *decided[name]) for name in decided)
    counts = {kind: sum(1 for k, _ in decided.values() if k == kind) for kind in KINDS}
    emulated = sum(counts[kind] for kind in EMULATED_KINDS)
    return f'''"""The public names of torch.cuda in torch {api.torch_version}, and what verify's CUDA emulation does with each.

Generated by migrate_xla/generators/make_cuda_api.py from the installed torch and the decisions kept by
hand in it; do not edit. Regenerate it when torch changes (tests/test_cuda_api.py fails
until every public name has a decision):

    {REGENERATE}

{len(decided)} names decided: {emulated} emulated ({", ".join(f"{counts[k]} {k}" for k in EMULATED_KINDS)}), \
{counts[REFUSED]} refused, {counts[MODULE]} modules.
"""

TORCH_VERSION = {_py(api.torch_version)}

# What each kind of decision means
KINDS = {{
{kinds}}}
EMULATED_KINDS = {_py_tuple(EMULATED_KINDS)}

# Each public module and its public names (its __all__, else the names it defines without a leading _)
PUBLIC_MODULES = {{
{modules}}}

# A name that is the same object as another one: the name its decision is kept under
SAME_AS = {{
{same_as}}}

# The decision on each name: (kind, how it is emulated or why it is refused)
DECISIONS = {{
{table}}}


def decision(qualname: str) -> tuple[str, str] | None:
    """The decision on ``qualname`` (``torch.cuda.synchronize``, ``torch.cuda.memory.memory_allocated``):
    its own, its first name's, or that of a refused module above it; None for a name not public."""
    found = DECISIONS.get(SAME_AS.get(qualname, qualname))
    if found is not None:
        return found
    module = qualname
    while "." in module:
        module = module.rpartition(".")[0]
        above = DECISIONS.get(SAME_AS.get(module, module))
        if above is not None and above[0] == "refused":
            return above
    return None


def refusal(qualname: str) -> str | None:
    """Why the emulation refuses ``qualname``, or None where it does not."""
    found = decision(qualname)
    return found[1] if found is not None and found[0] == "refused" else None
'''


def _py_tuple(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(map(_py, values)) + ("," if len(values) == 1 else "") + ")"


def installed() -> CudaApi:
    """The installed torch's torch.cuda (imports torch)."""
    import torch
    import torch.cuda

    return collect(torch.cuda, torch.__version__.split("+")[0])


def main(argv: list[str]) -> int:
    if argv:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    try:
        text = table_text(installed())
    except TableError as exc:
        print(f"make_cuda_api: {exc}", file=sys.stderr)
        return 1
    return write_generated(TABLE, text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
