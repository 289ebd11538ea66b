"""What the XLA4xx rules share: the mixed-precision names they match, how a replacement
spells ``torch`` and the run's device type (``"xla"``, ``"tpu"``: ``ctx.api``), finds an
argument, or makes one, and what the messages cite on each runtime."""

from __future__ import annotations

import libcst as cst

from codemods.shared.device_values import AMP_DEVICE_CALLS, is_cuda_value
from migrate_xla.rule.api import EQUAL, TORCH, FileContext, Import, call_arg, code_of, string_value

AMP_GUIDE = "https://docs.pytorch.org/xla/master/perf/amp.html"
# TorchTPU's autocast is PyTorch's own, on the "tpu" device (bfloat16 by default there)
TPU_AMP_GUIDE = "https://docs.pytorch.org/docs/stable/amp.html"
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
DEVICE_AUTOCAST = frozenset(name for name in AMP_DEVICE_CALLS if name.endswith("autocast"))
CUDA_SCALER = frozenset({"torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"})
DEVICE_SCALER = frozenset(name for name in AMP_DEVICE_CALLS if name.endswith("GradScaler"))
HALF = frozenset({"torch.float16", "torch.half"})
# functools.partial(autocast, ...): a context-manager factory (timm's train.py, ``amp_autocast``)
PARTIAL = frozenset({"functools.partial"})
CUDA_CUSTOM = {"torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.custom_bwd": "custom_bwd"}
BFLOAT16 = "torch.bfloat16"
NO_SCALING = "bfloat16 needs no loss scaling"
# ctx.shared key: ids of the nodes of the branches no run takes once XLA406 maps the
# run-time option that decides them (dtype_choices.DtypeChoices.dead); the scaler analysis skips them
NEVER_TAKEN = "never-taken-branches"


def torch_module(ctx: FileContext) -> tuple[str, list[Import]]:
    """How this file spells ``torch`` (``t`` after ``import torch as t``), and the import
    a replacement needs when the file does not import torch itself."""
    local = ctx.binds("torch")
    return (local, []) if local else ("torch", [Import("torch")])


def arg_index(call: cst.Call, position: int | None, keyword: str) -> int | None:
    """Where the argument passed at ``position`` or as ``keyword`` is in ``call.args``."""
    arg = call_arg(call, position, keyword)
    return None if arg is None else next(i for i, a in enumerate(call.args) if a is arg)


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=EQUAL)


def atomic(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr``, parenthesized when it is moved somewhere a bare operator would bind wrongly."""
    if expr.lpar or isinstance(
        expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseString, cst.BaseNumber)
    ):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def autocast_view(names: FileContext, call: cst.Call) -> cst.Call | None:
    """The autocast call that ``call`` makes or prepares: ``call`` itself for ``torch.autocast(...)``
    and the like, or, for ``functools.partial(torch.autocast, ...)``, a call of its first
    argument with the rest of its arguments (the same ``Arg`` nodes, so that ``id`` of each
    is what the tree holds): a partial's arguments get what a direct call's get. None for
    any other call, and for a partial whose function is given by keyword or unpacked."""
    name = names.qualname(call.func)
    if name in CUDA_AUTOCAST or name in DEVICE_AUTOCAST:
        return call
    if name not in PARTIAL or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    function = call.args[0].value
    if names.qualname(function) not in CUDA_AUTOCAST | DEVICE_AUTOCAST:
        return None
    return cst.Call(func=function, args=call.args[1:])


def is_partial(view: cst.Call, call: cst.Call) -> bool:
    """Whether ``view`` (``autocast_view``) stands for a ``partial`` rather than being ``call``."""
    return view is not call


def autocast_positions(
    names: FileContext,
    call: cst.Call,
    cuda_variables: set[str],
    half_variables: frozenset[str] | set[str] = frozenset(),
) -> tuple[int, int, int] | None:
    """Positions of ``dtype``, ``enabled`` and ``cache_enabled`` if ``call`` (an autocast call,
    or ``autocast_view`` of a partial) is CUDA autocast: ``torch.cuda.amp.autocast``, or
    ``torch.autocast`` on ``"cuda"``, on a CUDA/CPU choice, on a variable the file assigned one
    to (or its ``.type``: ``device = torch.device("cuda")``, ``device.type``), or on any device
    variable with a float16 dtype (``torch.float16``, or a name in ``half_variables``, which the
    file assigns ``torch.float16``: timm's ``amp_dtype``)."""
    name = names.qualname(call.func)
    if name in CUDA_AUTOCAST:
        return 1, 0, 2  # torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
    if name not in DEVICE_AUTOCAST:
        return None
    device = call_arg(call, 0, "device_type")
    dtype = call_arg(call, 1, "dtype")
    if device is None:
        return None
    value = device.value
    cuda = is_cuda_value(value) or code_of(value) in cuda_variables
    if isinstance(value, cst.Attribute) and value.attr.value == "type":  # device.type
        cuda = cuda or code_of(value.value) in cuda_variables
    half = dtype is not None and (
        names.qualname(dtype.value) in HALF or (half_variables and code_of(dtype.value) in half_variables)
    )
    if cuda or (half and string_value(value) is None):
        return 1, 2, 3  # torch.autocast(device_type, dtype, enabled, cache_enabled)
    return None


def amp_guide(ctx: FileContext) -> str:
    """The mixed-precision document a message cites on this run's runtime."""
    return AMP_GUIDE if ctx.api.lazy else TPU_AMP_GUIDE


def device_word(ctx: FileContext) -> str:
    """What a message calls the device: ``XLA`` (PyTorch/XLA) or ``TPU`` (TorchTPU)."""
    return ctx.api.device_type.upper()


def device_imports(ctx: FileContext) -> list[Import]:
    """The imports the runtime's device type needs beyond torch itself (``torch_xla``,
    which registers the ``xla`` device; TorchTPU's ``tpu`` device needs none: torch
    loads torch_tpu by itself). A replacement spells torch through ``torch_module``."""
    return [spec for spec in ctx.api.imports if spec != TORCH]


def device_string(ctx: FileContext, like: cst.CSTNode) -> cst.SimpleString:
    """The run's device type as a string (``"xla"``, ``"tpu"``), quoted the way ``like``
    (or the template it formats, ``'cuda:{}'.format(rank)``) was."""
    if isinstance(like, cst.Call) and isinstance(like.func, cst.Attribute):
        like = like.func.value
    elif isinstance(like, cst.BinaryOperation):
        like = like.left
    quote = "'" if isinstance(like, cst.SimpleString) and like.quote == "'" else '"'
    return cst.SimpleString(f"{quote}{ctx.api.device_type}{quote}")
