"""CUDA emulated on the CPU (the reference run without a GPU): torch.cuda and its legacy typed tensors."""

from __future__ import annotations

import types

import torch

from .emulation import _LEGACY_NAMES, _for_user_code, _install_device_shim, _returning

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


def _cpu_types(float64: bool) -> dict[str, type]:
    """torch.cuda's legacy typed tensors, each as its CPU type (in float64 mode, the float
    ones as torch.DoubleTensor: a request for a lower float dtype like any other)."""
    types_ = {name: getattr(torch, name) for name in LEGACY_TYPES}
    if float64:
        types_.update(FloatTensor=torch.DoubleTensor, HalfTensor=torch.DoubleTensor, BFloat16Tensor=torch.DoubleTensor)
    return types_


def _install_cuda_shim(float64: bool = False) -> None:
    cuda = torch.cuda
    _install_device_shim("cuda", cuda, ("nccl",))
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
    for name in (
        "set_device",
        "synchronize",
        "empty_cache",
        "ipc_collect",
        "init",
        "manual_seed",
        "manual_seed_all",
        "reset_peak_memory_stats",
        "reset_max_memory_allocated",
        "reset_accumulated_memory_stats",
    ):
        setattr(cuda, name, _returning(None))
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(cuda, name, _returning(0))
    cuda.is_available = _for_user_code(cuda.is_available, True)
    cuda.device_count = _for_user_code(cuda.device_count, 1)
    cuda.is_current_stream_capturing = _returning(False)
    cuda.current_device = _returning(0)
    cuda.is_bf16_supported = _returning(True)
    cuda.get_device_name = _returning("cpu (cuda emulated)")
    cuda.get_device_properties = _returning(
        types.SimpleNamespace(name="cpu (cuda emulated)", total_memory=0, major=0, minor=0, multi_processor_count=1)
    )
    cuda.get_device_capability = _returning((0, 0))
    cuda.mem_get_info = _returning((0, 0))
    autocast_init = torch.amp.autocast_mode.autocast.__init__  # the shim's: "cpu" stays "cpu"
    torch.cuda.amp.autocast.__init__ = lambda self, enabled=True, dtype=torch.float16, cache_enabled=True: (
        autocast_init(self, "cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
    )
    scaler_init = torch.amp.GradScaler.__init__
    torch.cuda.amp.GradScaler.__init__ = lambda self, *args, **kwargs: scaler_init(self, "cpu", *args, **kwargs)
