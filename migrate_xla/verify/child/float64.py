"""Float64 mode, the exactness check: both runs compute in float64 (Float64Mode), within a
budget of convolutions."""

from __future__ import annotations

import math
import os
import sys

import torch
from torch.overrides import TorchFunctionMode

from .shared import _after_import, _is_ours

# -- float64: the exactness check ----------------------------------------------------------
#
# Both runs do their floating-point work in float64: default dtype float64, every request
# for a lower float dtype (``dtype=torch.float32``, ``.float()``, ``.half()``,
# ``.to(torch.bfloat16)``) made float64, and a lower-precision tensor that meets a float64
# one in an op made float64 first (data read as float32 from NumPy, say). Autocast leaves
# float64 alone, so a float16 GPU run and a bfloat16 XLA run compute the same thing. What
# is left of the difference is the migration's, not rounding's: a correct migration
# agrees to about 1e-12.

LOW_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_TO_DOUBLE = {"float", "half", "bfloat16"}


def _is_low(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in LOW_FLOATS


def _is_double(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype == torch.float64


def _double(value):
    if _is_low(value):
        return value.double()
    if isinstance(value, (list, tuple)) and any(_is_low(v) for v in value):
        return type(value)(v.double() if _is_low(v) else v for v in value)
    return value


def _mixes_doubles(values) -> bool:
    flat = [w for v in values for w in (v if isinstance(v, (list, tuple)) else (v,))]
    return any(_is_double(v) for v in flat) and any(_is_low(v) for v in flat)


# torch's own bookkeeping that must keep its float32 (a GradScaler's scale and inf flags), and
# its rebuilding of a tensor around a storage it received (torch._utils._rebuild_tensor: a batch
# a DataLoader worker collated into shared memory, a float32 checkpoint torch.load reads): a
# float64 tensor set on that float32 storage needs twice its bytes ("Trying to resize storage
# that is not resizable"); the tensor arrives in its own dtype and meets float64 later
_KEEPS_ITS_DTYPES = ("torch.amp.", "torch.cuda.amp.", "torch._utils")


# an op's output, and a GradScaler's scale and inf flag handed to a fused optimizer
# (torch._fused_adam_ and kin take them in float32 only: "expected scalar type Float")
_KEEP_KWARGS = frozenset({"out", "grad_scale", "found_inf"})

# Ops that read bytes as the dtype they are given, not values converted to it: safetensors (how
# transformers' from_pretrained, PEFT and Accelerate load weights) reads a file as uint8 and views
# it as its dtype, `torch.asarray(storage, dtype=torch.uint8).view(dtype=torch.float32)`; made
# float64, the view read 8 bytes an element, half the elements, and the reshape that follows died
# ("shape '[512, 64]' is invalid for input of size 16384"). Such a tensor keeps the dtype asked
# for, arrives in it, and meets float64 in the script's first op (or the model's copy_).
_BUFFERS = (torch.UntypedStorage, torch.TypedStorage, bytes, bytearray, memoryview)


def _reinterprets_bytes(name: str, args, kwargs) -> bool:
    if name == "frombuffer":
        return True
    if name == "asarray":
        return bool(args) and isinstance(args[0], _BUFFERS)
    if name == "view":  # Tensor.view(dtype): the source's bytes, unless a float64 of the mode's own
        return _view_dtype(args, kwargs) is not None and not _is_double(args[0] if args else None)
    return False


def _view_dtype(args, kwargs):
    """The dtype of ``Tensor.view(dtype)``, or None for ``Tensor.view(*shape)``."""
    if "dtype" in kwargs:
        return kwargs["dtype"]
    return args[1] if len(args) == 2 and isinstance(args[1], torch.dtype) else None


_is_compiling = getattr(torch.compiler, "is_compiling", lambda: False)  # torch < 2.3: never


def _called_from(prefixes: tuple[str, ...]) -> bool:
    if _is_compiling():
        # Dynamo tracing a compiled region (torch.compile in the migrated run) cannot read frames
        # (a graph break at every op): the code it compiles is the model's, not a GradScaler's
        return False
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "torch.overrides" or _is_ours(module)):
            return module.startswith(prefixes)
        frame = frame.f_back
    return False


# What float64 costs: XLA's CPU backend computes float64 convolutions some 40 times slower
# than float32 ones (measured: the weight gradient of a 64-channel 3x3 convolution on 8x56x56,
# 1.6 s against 0.04 s; eager CPU 4 times), and float64 matrix products (its HLO dot) 8 to 27
# times slower: 0.22 G multiply-adds a second in a convolution, 2.6 G in a dot, against 72 G in
# a float32 dot (benchmarks/bench_float64_ops.py; every other op of a GPT's step stays within 3
# times float32). So a large model would take many times its bare runs. The harness sets a budget
# of convolution multiply-adds for the first forward pass, a product's counting PRODUCT_WEIGHT
# of one (what a convolution's costs in a dot's time); past it, the run stops at once (finished
# "float64-cost") and both run again as written (harness.py).
_CONVOLUTIONS = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}
_PRODUCTS = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "__matmul__", "__rmatmul__"}
PRODUCT_WEIGHT = 0.22 / 2.6
_conv_budget = {"limit": None, "macs": 0, "open": True, "recorder": None}


def _operands(args, kwargs) -> tuple:
    """The two operands of a convolution or product, by position or by torch's keyword names."""
    first = args[0] if args else kwargs.get("input")
    second = args[1] if len(args) > 1 else next((kwargs[k] for k in ("weight", "mat2", "other") if k in kwargs), None)
    return first, second


def _count_cost(name: str, args, kwargs, result) -> None:
    """Adds what ``name`` costs in float64 on XLA:CPU, in convolution multiply-adds, and stops
    the run past the budget."""
    if name in ("addmm", "baddbmm"):  # (bias, a, b): the product is of the last two
        args = args[1:]
    first, second = _operands(args, kwargs)
    if not (isinstance(result, torch.Tensor) and isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)):
        return
    if name in _CONVOLUTIONS:
        per_output = second.shape[1] * math.prod(second.shape[2:])  # in channels / groups x kernel
        macs = (first if name.startswith("conv_transpose") else result).numel() * per_output
    elif name == "linear":
        macs = result.numel() * second.shape[-1] * PRODUCT_WEIGHT
    else:
        macs = result.numel() * (first.shape[-1] if first.dim() else 1) * PRODUCT_WEIGHT
    _conv_budget["macs"] += int(macs)
    if _conv_budget["macs"] > _conv_budget["limit"]:
        _conv_budget["open"] = False
        recorder = _conv_budget["recorder"]
        recorder.float64_cost = _conv_budget["macs"]
        recorder.finish("float64-cost")
        os._exit(0)


class Float64Mode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _called_from(_KEEPS_ITS_DTYPES):
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name == "hardsigmoid":
            return _hardsigmoid(*args, **kwargs)
        # not while torch.jit.trace runs the model (it runs it three times with its check, and the
        # count's read of an XLA result's size under the tracer raised "Cannot insert a Tensor
        # that requires grad as a constant")
        counted = _conv_budget["open"] and _conv_budget["limit"] is not None and not torch.jit.is_tracing()
        if counted and (name in _CONVOLUTIONS or name in _PRODUCTS):
            result = self.__torch_function__(_Uncounted(func), types, args, kwargs)
            _count_cost(name, args, kwargs, result)
            return result
        if name in ("frombuffer", "asarray", "view") and _reinterprets_bytes(name, args, kwargs):
            return func(*args, **kwargs)
        if name == "view" and _view_dtype(args, kwargs) in LOW_FLOATS and _is_double(args[0] if args else None):
            # a float the mode made float64 viewed as a float of its width (float16 as bfloat16):
            # float64 stays itself, where a float32 view of its 8-byte elements doubled their count
            return func(args[0], torch.float64)
        if name in _TO_DOUBLE:
            func = torch.Tensor.double
        elif kwargs.get("dtype") in LOW_FLOATS:
            kwargs = {**kwargs, "dtype": torch.float64}
        if name in ("to", "type"):
            args = tuple(torch.float64 if a in LOW_FLOATS else a for a in args)
        elif _mixes_doubles([*args, *kwargs.values()]):
            # an in-place op writes into its first argument: that one must stay itself
            keep_first = (
                (name.endswith("_") and not name.startswith("__"))
                or name.startswith("__i")
                or name == "__setitem__"
                or "out" in kwargs
            )
            args = (*args[:1], *map(_double, args[1:])) if keep_first else tuple(map(_double, args))
            kwargs = {k: (v if k in _KEEP_KWARGS else _double(v)) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def _hardsigmoid(input, inplace=False):
    """``F.hardsigmoid`` as its definition, ``clamp(x / 6 + 1/2, 0, 1)``: eager torch 2.9's CPU
    backward multiplies by a sixth rounded to float32 even in float64 (2.98e-8 off, where
    torch_xla's is exact), which float32 training never sees and which made timm's MobileNetV3
    a float64 mismatch from its second step (docs/runtime_defects.md)."""
    result = torch.clamp(input / 6 + 0.5, 0.0, 1.0)
    return input.copy_(result) if inplace else result


class _Uncounted:
    """``func`` under another name, so that the cost count sees each call once."""

    def __init__(self, func) -> None:
        self.func = func
        self.__name__ = "_uncounted"

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)


def _install_float64() -> None:
    torch.set_default_dtype(torch.float64)
    _after_import(("torch.distributed.fsdp._fully_shard._fsdp_api",), _full_precision_fsdp2)


def _full_precision_fsdp2(module) -> None:
    """FSDP2's mixed precision in float64 too: a policy's lower dtypes (``param_dtype=torch.bfloat16``,
    ``reduce_dtype=torch.float32``) are made float64's, as autocast's are, so that the reference's
    gradients are not reduced in float32 behind the mode's back (PyTorch's FSDP2 example with
    ``--mixed-precision``: a float64 mismatch of 1e-5 from its second step)."""
    policy = module.MixedPrecisionPolicy
    init = policy.__init__

    def full(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for name in ("param_dtype", "reduce_dtype", "output_dtype"):
            if getattr(self, name, None) in LOW_FLOATS:
                object.__setattr__(self, name, torch.float64)

    policy.__init__ = full
