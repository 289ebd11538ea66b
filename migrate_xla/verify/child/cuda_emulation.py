"""CUDA emulated on the CPU (the reference run without a GPU): torch.cuda and its legacy typed tensors.

What becomes of each public name of ``torch.cuda`` and its submodules is decided in one
table, migrate_xla/generated/cuda_api.py (generated from the installed torch by
migrate_xla/generators/make_cuda_api.py, with the decisions kept by hand there); the harness passes
its facts in the config (children._run_child: ``cuda_api``), as this package imports nothing
of xla-migrate. A name the table emulates gets its CPU meaning here (``_emulations``) under
each of its names (``torch.cuda.memory_allocated`` and ``torch.cuda.memory.memory_allocated``
are one function); a refused one raises a clear error when the script uses it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import sys
import types

import torch

from .emulation import (
    _LEGACY_NAMES,
    _DeviceContext,
    _DeviceOfContext,
    _for_user_code,
    _install_device_shim,
    _returning,
    _Stream,
    _torch_calls,
)

LEGACY_TYPES = (
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
)
CUDA_LABEL = "cpu (cuda emulated)"


@dataclasses.dataclass(frozen=True)
class EmulatedGpu:
    """The one GPU model the emulated device is, to the script: every answer about the device
    (``torch.cuda.get_device_name``, ``get_device_capability``, ``get_device_properties``,
    ``is_bf16_supported``, ``is_tf32_supported``, ``mem_get_info``, ``torch.version.cuda``) is
    read from it, so a library that checks the architecture (transformers' ``--tf32``,
    ``--bf16``; Lightning's Tensor Core hint; Accelerate's FP8 check) sees one real model."""

    name: str
    capability: tuple[int, int]  # CUDA compute capability (major, minor)
    total_memory: int  # bytes, as torch reports it (at most the host's: _device_memory)
    multi_processor_count: int
    bf16: bool  # computes in bfloat16 natively
    tf32: bool  # TensorFloat-32 matmuls (Ampere and later)
    cuda_version: str  # torch.version.cuda where the installed torch is a CPU build
    L2_cache_size: int
    warp_size: int = 32
    max_threads_per_multi_processor: int = 2048
    regs_per_multiprocessor: int = 65536
    shared_memory_per_block: int = 48 * 1024
    shared_memory_per_block_optin: int = 163 * 1024
    shared_memory_per_multiprocessor: int = 164 * 1024


# An A100 (Ampere, compute capability 8.0), as torch describes an A100-SXM4-40GB: the earliest
# architecture with what the CPU emulation gives (bfloat16, TF32 matmuls: float32 on the CPU),
# and not what it cannot (FP8, from 8.9: Accelerate and Transformer Engine would pick kernels
# that the CPU does not have). Its memory is capped at the host's (_device_memory).
EMULATED_GPU = EmulatedGpu(
    name="NVIDIA A100-SXM4-40GB",
    capability=(8, 0),
    total_memory=40536 * 2**20,
    multi_processor_count=108,
    bf16=True,
    tf32=True,
    cuda_version="12.8",
    L2_cache_size=40 * 2**20,
)


class _DeviceProperties:
    """What ``torch.cuda.get_device_properties`` gives: the fields of torch's
    ``_CudaDeviceProperties``, read from EMULATED_GPU, and its repr."""

    def __init__(self, gpu: EmulatedGpu, total_memory: int) -> None:
        self.name = gpu.name
        self.major, self.minor = gpu.capability
        self.total_memory = total_memory
        self.multi_processor_count = gpu.multi_processor_count
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.L2_cache_size = gpu.L2_cache_size
        self.warp_size = gpu.warp_size
        self.max_threads_per_multi_processor = gpu.max_threads_per_multi_processor
        self.regs_per_multiprocessor = gpu.regs_per_multiprocessor
        self.shared_memory_per_block = gpu.shared_memory_per_block
        self.shared_memory_per_block_optin = gpu.shared_memory_per_block_optin
        self.shared_memory_per_multiprocessor = gpu.shared_memory_per_multiprocessor
        self.gcnArchName = "NVIDIA"  # ROCm's field; a CUDA device names no gfx architecture
        self.uuid = "00000000-0000-0000-0000-000000000000"
        self.pci_bus_id = self.pci_device_id = self.pci_domain_id = 0

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count}, "
            f"uuid={self.uuid}, pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
            f"pci_domain_id={self.pci_domain_id}, L2_cache_size={self.L2_cache_size // 2**20}MB)"
        )


def _device_memory(gpu: EmulatedGpu) -> tuple[int, int]:
    """The emulated device's free and total memory: the model's, capped at the host's. The
    device's memory is the host's: a script that sizes its batches by it, or places a model's
    layers by it (Accelerate's ``device_map="auto"`` reads ``mem_get_info``), must not plan for
    memory the host does not have (the reference would end in the host's OOM killer, not a
    verdict); and a host with more than the model has still answers as the model, so batches
    come out as the GPU's would be."""
    available, total = _host_memory()
    total = min(gpu.total_memory, total) if total else gpu.total_memory
    return min(available, total) if available else total, total


class _CudaVersion(types.ModuleType):
    """``torch.version`` of a CPU build of torch, whose ``cuda`` (None) the script reads as
    the CUDA version of a GPU build (EMULATED_GPU.cuda_version: transformers' TF32 check
    reads it), while torch's own code reads None, as it is."""

    @property
    def cuda(self):
        real = self.__dict__.get("cuda")
        return real if real is not None or _torch_calls() else EMULATED_GPU.cuda_version

    @cuda.setter
    def cuda(self, value) -> None:
        self.__dict__["cuda"] = value


def _present_cuda_version() -> None:
    """A CPU build of torch answers the script's ``torch.version.cuda`` as a GPU build would."""
    version = sys.modules.get("torch.version")
    if version is not None and version.__dict__.get("cuda") is None and type(version) is types.ModuleType:
        version.__class__ = _CudaVersion


# Emulated by patching torch's own class or function where it is (its object stays)
PATCHED_IN_PLACE = frozenset(
    {"torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler", "torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd"}
)


def _cpu_types(float64: bool) -> dict[str, type]:
    """torch.cuda's legacy typed tensors, each as its CPU type (in float64 mode, the float
    ones as torch.DoubleTensor: a request for a lower float dtype like any other)."""
    types_ = {name: getattr(torch, name) for name in LEGACY_TYPES}
    if float64:
        types_.update(FloatTensor=torch.DoubleTensor, HalfTensor=torch.DoubleTensor, BFloat16Tensor=torch.DoubleTensor)
    return types_


def _host_memory() -> tuple[int, int]:
    """The host's available and total memory in bytes (0, 0 where the system does not say)."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    except (AttributeError, ValueError, OSError):
        return 0, 0


class _NoOpContext(contextlib.ContextDecorator):
    """A context, and a decorator, that changes nothing (nvtx.range, profiler.profile, use_mem_pool)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class _MemPool:
    """torch.cuda.MemPool: a pool that holds nothing (where memory comes from changes no result)."""

    _next_id = 1

    def __init__(self, allocator=None, *args, **kwargs) -> None:
        self.allocator = allocator
        self.id = (0, _MemPool._next_id)
        _MemPool._next_id += 1

    def use_count(self) -> int:
        return 1

    def snapshot(self) -> list:
        return []


class _ExternalStream(_Stream):
    """torch.cuda.ExternalStream(pointer): the one CPU stream, the pointer ignored."""

    def __init__(self, stream_ptr=None, device=None, **kwargs) -> None:
        super().__init__(device)


def _emulations(float64: bool) -> dict[str, object]:
    """The CPU meaning of each name the table emulates but torch's own object cannot serve
    (decided as no-op, value or cpu), by the name it is decided under. Each gets an object of
    its own: torch.compile refuses one function under two unrelated names."""
    # The emulated device's own generator: seeding it (torch.cuda.manual_seed, and
    # torch.manual_seed through it) leaves the CPU generator, which random numbers drawn "on
    # the device" come from in the emulation, as it is: both runs draw from the CPU generator.
    generator = torch.Generator()
    gpu = EMULATED_GPU
    free, total = _device_memory(gpu)

    def seed_device(seed):
        generator.manual_seed(int(seed))

    properties = _DeviceProperties(gpu, total)
    emulated: dict[str, object] = {
        # the device
        "is_available": _for_user_code(torch.cuda.is_available, True),
        "device_count": _for_user_code(torch.cuda.device_count, 1),
        "current_device": _returning(0),
        "set_device": _returning(None),
        "device": type("device", (_DeviceContext,), {"__module__": "torch.cuda"}),
        "device_of": type("device_of", (_DeviceOfContext,), {"__module__": "torch.cuda"}),
        "init": _returning(None),
        "is_initialized": _returning(True),
        "synchronize": _returning(None),
        "ipc_collect": _returning(None),
        # the one GPU model the device is (EMULATED_GPU)
        "get_device_name": _returning(gpu.name),
        "get_device_properties": _returning(properties),
        "get_device_capability": _returning(gpu.capability),
        "is_bf16_supported": _returning(gpu.bf16),
        "is_tf32_supported": _returning(gpu.tf32),
        "can_device_access_peer": _returning(False),
        "check_error": _returning(None),
        "get_sync_debug_mode": _returning(0),
        "set_sync_debug_mode": _returning(None),
        "utilization": _returning(0),
        "temperature": _returning(0),
        "power_draw": _returning(0),
        "clock_rate": _returning(0),
        "memory_usage": _returning(0),
        "device_memory_used": _returning(0),
        "list_gpu_processes": _returning("GPU:0\nno processes are running"),
        # streams (Stream, Event, stream, StreamContext, current_stream, ...: _install_device_shim)
        "ExternalStream": _ExternalStream,
        "get_stream_from_external": lambda data_ptr, device=None: torch.cuda.current_stream(),
        # random numbers
        "manual_seed": seed_device,
        "manual_seed_all": lambda seed: seed_device(seed),
        "seed": lambda: generator.seed() and None,
        "seed_all": lambda: generator.seed() and None,
        "initial_seed": lambda: generator.initial_seed(),
        "get_rng_state": lambda device="cuda": generator.get_state(),
        "get_rng_state_all": lambda: [generator.get_state()],
        "set_rng_state": lambda new_state, device="cuda": generator.set_state(new_state),
        "set_rng_state_all": lambda new_states: generator.set_state(list(new_states)[0]),
        "default_generators": (generator,),
        # memory
        "empty_cache": _returning(None),
        "memory_allocated": _returning(0),
        "max_memory_allocated": _returning(0),
        "memory_reserved": _returning(0),
        "max_memory_reserved": _returning(0),
        "memory_cached": _returning(0),
        "max_memory_cached": _returning(0),
        "memory_stats": lambda *args, **kwargs: collections.defaultdict(int),
        "host_memory_stats": lambda *args, **kwargs: collections.defaultdict(int),
        "memory_stats_as_nested_dict": lambda *args, **kwargs: {},
        "host_memory_stats_as_nested_dict": lambda *args, **kwargs: {},
        "memory_summary": _returning(f"{CUDA_LABEL}: no memory statistics (the emulated device allocates nothing)"),
        "memory_snapshot": lambda *args, **kwargs: [],
        "mem_get_info": _returning((free, total)),
        "reset_peak_memory_stats": _returning(None),
        "reset_max_memory_allocated": _returning(None),
        "reset_max_memory_cached": _returning(None),
        "reset_accumulated_memory_stats": _returning(None),
        "reset_peak_host_memory_stats": _returning(None),
        "reset_accumulated_host_memory_stats": _returning(None),
        "set_per_process_memory_fraction": _returning(None),
        "get_per_process_memory_fraction": _returning(1.0),
        "get_allocator_backend": _returning("native"),
        "caching_allocator_enable": _returning(None),
        "MemPool": _MemPool,
        "use_mem_pool": type("use_mem_pool", (_NoOpContext,), {}),
        # CUDA graphs: what has a meaning without capturing
        "is_current_stream_capturing": _returning(False),
        "make_graphed_callables": lambda callables, sample_args, *args, **kwargs: callables,
        "amp.amp_definitely_not_available": _returning(False),
        # annotations and profiling
        "nvtx.mark": _returning(None),
        "nvtx.range_push": _returning(0),
        "nvtx.range_pop": _returning(0),
        "nvtx.range_start": _returning(0),
        "nvtx.range_end": _returning(None),
        "nvtx.range": type("range", (_NoOpContext,), {}),
        "profiler.init": _returning(None),
        "profiler.start": _returning(None),
        "profiler.stop": _returning(None),
        "profiler.profile": type("profile", (_NoOpContext,), {}),
        # TunableOp: nothing to tune (and no results file written)
        "tunable.get_filename": _returning(""),
        "tunable.get_results": _returning(()),
        "tunable.get_validators": _returning(()),
    }
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
    ):
        emulated[f"tunable.{name}"] = _returning(None)
    for name in ("is_enabled", "tuning_is_enabled", "record_untuned_is_enabled", "read_file", "write_file"):
        emulated[f"tunable.{name}"] = _returning(False)
    for name in ("get_max_tuning_duration", "get_max_tuning_iterations", "get_rotating_buffer_size"):
        emulated[f"tunable.{name}"] = _returning(0)
    # legacy typed tensors and storages: torch's CPU ones
    emulated.update(_cpu_types(float64))
    for kind in ("BFloat16", "Bool", "Byte", "Char", "ComplexDouble", "ComplexFloat", "Double", "Float", "Half"):
        emulated[f"{kind}Storage"] = getattr(torch, f"{kind}Storage")
    for kind in ("Int", "Long", "Short"):
        emulated[f"{kind}Storage"] = getattr(torch, f"{kind}Storage")
    for kind in ("BFloat16", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short"):
        emulated[f"sparse.{kind}Tensor"] = getattr(torch.sparse, f"{kind}Tensor")
    return {f"torch.cuda.{name}": value for name, value in emulated.items()}


def _refusal(qualname: str, reason: str, original: object) -> object:
    """What stands for a refused name: it raises, naming the name and the reason, when the
    script uses it (torch's own calls of a refused function still reach torch's)."""
    message = f"the reference calls {qualname}, which cannot be emulated on the CPU ({reason})"

    def refuse(*args, **kwargs):
        raise NotImplementedError(message)

    if isinstance(original, types.ModuleType):
        return _RefusedModule(qualname, original, message)
    if isinstance(original, type):

        def new(cls, *args, **kwargs):
            raise NotImplementedError(message)

        return type(original.__name__, (), {"__new__": new, "__doc__": message, "__module__": original.__module__})
    if callable(original):

        def refused(*args, **kwargs):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller == "torch" or caller.startswith("torch."):
                return original(*args, **kwargs)
            raise NotImplementedError(message)

        refused.__name__ = getattr(original, "__name__", qualname.rpartition(".")[2])
        refused.__doc__ = message
        return refused
    return refuse


class _RefusedModule(types.ModuleType):
    """A refused module (torch.cuda.jiterator): any of its names raises when the script uses it
    (torch's own lookups, as torch.compile's table of functions makes, reach the module's)."""

    def __init__(self, qualname: str, original: types.ModuleType, message: str) -> None:
        super().__init__(qualname, message)
        self.__original = original

    def __getattr__(self, name):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if name.startswith("__") or caller == "torch" or caller.startswith("torch."):
            return getattr(self.__original, name)
        raise NotImplementedError(self.__doc__)


def _lookup(qualname: str):
    """The object at ``torch.cuda.x.y`` (None where there is none), and its owner and attribute."""
    owner_name, _, attr = qualname.rpartition(".")
    owner = sys.modules.get(owner_name)
    if owner is None:
        try:
            owner = __import__(owner_name, fromlist=["_"])
        except ImportError:
            return None, None, attr
    return getattr(owner, attr, None), owner, attr


def _install_cuda_shim(float64: bool = False, cuda_api: dict | None = None) -> None:
    """``cuda_api``: migrate_xla/generated/cuda_api.py's table as the harness passes it
    (cuda_refusals.child_facts): the names emulated by a meaning of their own, the refused
    ones with their reasons, and the names that are one object (``same_as``); without it, the
    emulations alone."""
    cuda = torch.cuda
    _install_device_shim("cuda", cuda, ("nccl",))
    _present_cuda_version()
    # legacy typed tensors: torch.cuda.FloatTensor(batch, 1), x.type(torch.cuda.LongTensor), ...
    cpu_types = _cpu_types(float64)
    for name, cpu_type in cpu_types.items():
        setattr(cuda, name, cpu_type)
    set_default_tensor_type = torch.set_default_tensor_type

    def default_tensor_type_on_cpu(t):
        if isinstance(t, str) and t.startswith("torch.cuda."):
            t = cpu_types.get(t.removeprefix("torch.cuda."), t)
        return set_default_tensor_type(t)

    torch.set_default_tensor_type = default_tensor_type_on_cpu
    _LEGACY_NAMES.update({f"torch.cuda.{name}": f"torch.{t.__name__}" for name, t in cpu_types.items()})
    # every name the table decides on: emulated ones get their CPU meaning, refused ones raise
    emulations = _emulations(float64)
    cuda_api = cuda_api or {"emulated": sorted(emulations), "refused": {}, "same_as": {}}
    for qualname in cuda_api["emulated"]:
        _, owner, attr = _lookup(qualname)
        if owner is not None and qualname in emulations:
            setattr(owner, attr, emulations[qualname])
    for qualname, reason in cuda_api["refused"].items():
        original, owner, attr = _lookup(qualname)
        if owner is not None:
            setattr(owner, attr, _refusal(qualname, reason, original))
            if isinstance(original, types.ModuleType):
                sys.modules[qualname] = getattr(owner, attr)
    # a name that is the same object as another gets what that one got (torch.cuda.memory.memory_allocated)
    for alias, qualname in cuda_api["same_as"].items():
        _, owner, attr = _lookup(alias)
        value, _, _ = _lookup(qualname)
        if owner is not None and value is not None:
            setattr(owner, attr, value)
    autocast_init = torch.amp.autocast_mode.autocast.__init__  # the shim's: "cpu" stays "cpu"
    torch.cuda.amp.autocast.__init__ = lambda self, enabled=True, dtype=torch.float16, cache_enabled=True: (
        autocast_init(self, "cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
    )
    scaler_init = torch.amp.GradScaler.__init__
    torch.cuda.amp.GradScaler.__init__ = lambda self, *args, **kwargs: scaler_init(self, "cpu", *args, **kwargs)
