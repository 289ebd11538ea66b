"""What a device expression names: CUDA device strings and CUDA/CPU choices, the run's
device's spellings (``ctx.api``: PyTorch/XLA's or TorchTPU's), whether a script may run
on the CPU by the user's choice, and the names a file assigns tensors moved to a device.

Shared by the families that meet device values: devices (XLA1xx), amp (XLA4xx: autocast's
and GradScaler's device), data_loading (XLA302: the loader's device) and cuda_only
(XLA899 skips the CUDA checks XLA104 keeps: ``KEPT_CUDA_CHECKS``); the tensors on a device:
recompilation (XLA706) and lazy_execution (XLA205)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from codemods.shared.statements import dotted
from migrate_xla.rule.api import TORCH_XLA, Import, Runtime, code_nodes, code_of, string_value

# "cuda", "cuda:0", and the templates scripts format an index into: "cuda:", "cuda:{}", "cuda:{:d}"
# (a conversion or format spec: hifi-gan's "cuda:{:d}".format(rank)), "cuda:%d", "cuda:%02d"
CUDA_NAME = re.compile(r"cuda(:(\d+|\{\w*(![rsa])?(:[^{}]*)?\}|%\d*[dis])?)?$")
OTHER_DEVICE = re.compile(r"(cpu|mps)(:\d+)?$")
# The text of every CUDA_NAME literal is_cuda_literal sees: its quote, then cuda (but for
# escapes, "\x63uda", or a concatenation that splits the word, "cu" "da")
CUDA_STRING = r"""['"]cuda"""


def is_cuda_literal(node: cst.CSTNode) -> bool:
    """A CUDA device name: ``"cuda"``, ``"cuda:0"``, ``f"cuda:{rank}"``, ``"cuda:{}".format(rank)``,
    ``"cuda:%d" % rank`` or ``"cuda:" + str(rank)``."""
    value = string_value(node)
    if value is not None:
        return bool(CUDA_NAME.match(value))
    if isinstance(node, cst.FormattedString) and node.parts:
        first = node.parts[0]
        return isinstance(first, cst.FormattedStringText) and (
            first.value == "cuda:" or (first.value == "cuda" and len(node.parts) == 1)
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        return string_value(node.func.value) is not None and is_cuda_literal(node.func.value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Modulo, cst.Add)):
        return string_value(node.left) is not None and is_cuda_literal(node.left)
    return False


def is_other_device(node: cst.CSTNode) -> bool:
    value = string_value(node)
    return value is not None and bool(OTHER_DEVICE.match(value))


def cuda_choice(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The condition of ``"cuda" if COND else "cpu"`` (either order), else None."""
    if isinstance(node, cst.IfExp) and (
        (is_cuda_literal(node.body) and is_other_device(node.orelse))
        or (is_other_device(node.body) and is_cuda_literal(node.orelse))
    ):
        return node.test
    return None


def is_cuda_value(node: cst.CSTNode) -> bool:
    return is_cuda_literal(node) or cuda_choice(node) is not None


# "cuda" if torch.cuda.is_available() else "cpu": a test that means "use the accelerator"
AVAILABILITY_TEST = re.compile(r"(not\s+)?[\w.]*(cuda|accelerator)\.is_available\(\)")


def device_string(like: cst.CSTNode, device_type: str) -> cst.SimpleString:
    """The device name ``device_type`` (``"xla"``, ``"tpu"``: ``ctx.api.device_type``) as a
    string, quoted the way ``like`` (or the template it formats) was."""
    if isinstance(like, cst.Call) and isinstance(like.func, cst.Attribute):
        like = like.func.value  # 'cuda:{}'.format(rank)
    elif isinstance(like, cst.BinaryOperation):
        like = like.left  # 'cuda:%d' % rank
    quote = "'" if isinstance(like, cst.SimpleString) and like.quote == "'" else '"'
    return cst.SimpleString(f"{quote}{device_type}{quote}")


def xla_string(like: cst.CSTNode) -> cst.SimpleString:
    """The string ``"xla"``, quoted the way ``like`` (or the template it formats) was."""
    return device_string(like, "xla")


# What a device named by a string needs imported, by runtime: importing torch_xla registers
# the "xla" device; torch loads torch_tpu by itself (its device-backend entry point), which
# names the "tpu" device, so a string needs nothing there.
STRING_IMPORTS: dict[str, tuple[Import, ...]] = {"torch-xla": (TORCH_XLA,), "torch-tpu": ()}

# What messages call the runtime a fix moved to: the torch-xla messages say "XLA"
ON_RUNTIME = {"torch-xla": "XLA", "torch-tpu": "TorchTPU"}


def string_imports(api: Runtime) -> tuple[Import, ...]:
    """The imports a device name spelled as a string (``"xla"``, ``"tpu"``) needs on ``api``."""
    return STRING_IMPORTS[api.name]


def moved_to(api: Runtime) -> tuple[str, tuple[Import, ...]]:
    """What a move to the run's device (``x.to(...)``) is given, and its imports: PyTorch/XLA's
    ``torch_xla.device()``; on TorchTPU the name ``"tpu"``, as ``.to("cuda")`` named CUDA."""
    if api.name == "torch-xla":
        return api.device, api.imports
    return f'"{api.device_type}"', string_imports(api)


def target_name(node: cst.CSTNode) -> str:
    """The name a value is stored under: ``device``, ``self.device``, ``cfg["device"]``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            return string_value(index.value) or ""
    return ""


def names_device(name: str) -> bool:
    return "device" in name.lower()


# PyTorch/XLA's device expression; a rule writes the run's, ``self.ctx.api.device``
XLA_DEVICE = "torch_xla.device()"

# The text every device choice chooses_cpu finds spells: a "cpu" string, or a --device option
CPU_CHOICE = r"""['"](?:cpu|--[\w-]*device)\b"""


def chooses_cpu(nodes: Iterable[cst.CSTNode], qualname) -> bool:
    """Whether the migrated module of ``nodes`` (all of them) may run on the CPU by the user's choice.

    A CUDA/CPU choice on anything but GPU availability (XLA101 and XLA102 keep those), a
    device-named variable set to the CPU (``else: device = torch.device("cpu")``), or a
    ``--device`` option (the user may pass ``cpu``). ``qualname`` resolves names.
    """
    for node in nodes:
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.IfExp:
            branches = (node.body, node.orelse)
            if any(_is_cpu(b, qualname) for b in branches) and any(_is_accelerator(b, qualname) for b in branches):
                if not AVAILABILITY_TEST.fullmatch(code_of(node.test)):
                    return True
        elif node_type is cst.Assign:
            if _is_cpu(node.value, qualname) and any(names_device(target_name(t.target)) for t in node.targets):
                return True
        elif node_type is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "add_argument":
            flags = [string_value(a.value) or "" for a in node.args if a.keyword is None]
            if any(re.fullmatch(r"--[\w-]*device", flag) for flag in flags):
                return True
    return False


# Module-level, not nested in chooses_cpu: a nested function that calls itself is a cycle
# (function -> closure cell -> function) that holds what it closes over until the cyclic
# collector runs, and the migration runs with that collector off (run.py).
def _is_cpu(node: cst.CSTNode, qualname) -> bool:
    if is_other_device(node):
        return True
    return (
        isinstance(node, cst.Call)
        and qualname(node.func) == "torch.device"
        and any(is_other_device(a.value) for a in node.args[:1])
    )


def _is_accelerator(node: cst.CSTNode, qualname) -> bool:
    if is_cuda_value(node) or string_value(node) == "xla":
        return True
    if isinstance(node, cst.IfExp):
        return _is_accelerator(node.body, qualname) or _is_accelerator(node.orelse, qualname)
    return isinstance(node, cst.Call) and (
        qualname(node.func) in ("torch_xla.device", "torch.accelerator.current_accelerator")
        or (qualname(node.func) == "torch.device" and any(_is_accelerator(a.value, qualname) for a in node.args[:1]))
    )


# autocast and GradScaler name a device too, but the mixed-precision rules (XLA4xx) own
# them: moving them to XLA also changes float16 to bfloat16 and drops the loss scaling.
AMP_DEVICE_CALLS = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.GradScaler",
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
    }
)

# ctx.shared key: ids of the CUDA checks left as they are, which XLA899 does not flag
KEPT_CUDA_CHECKS = "kept-cuda-checks"


# -- the tensors a file keeps on a device (recompilation's XLA706, lazy_execution's XLA205) --
def device_tensor_names(module: cst.Module) -> set[str]:
    """The names (``x``, ``self.data``) the file assigns a tensor moved to a device, and their aliases
    (``x = xtr if split == "train" else xte``); ``x, y = x.to(d), y.to(d)`` assigns two."""
    assignments = [
        pair
        for node in code_nodes(module)
        if isinstance(node, cst.Assign)
        for target in node.targets
        for pair in _pairs(target.target, node.value)
    ]
    names = {name for name, value in assignments if name is not None and _moves(value)}
    grown = True
    while grown:  # aliases of aliases
        before = len(names)
        names |= {name for name, value in assignments if name is not None and _aliases(value, names)}
        grown = len(names) > before
    return names


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[str | None, cst.BaseExpression]]:
    """What one assignment binds: the target's name and its value, element by element where a tuple
    is assigned a tuple of the same length."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements):
            return [pair for t, v in zip(target.elements, value.elements) for pair in _pairs(t.value, v.value)]
    return [(dotted(target), value)]


def _moves(value: cst.CSTNode) -> bool:
    """``t.cuda()``, ``t.to(device)`` (not ``t.to(torch.float32)``), ``torch.ones(3, device=d)``."""
    for node in code_nodes(value):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            return True
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and node.args:
            first = node.args[0]
            if first.keyword is None and "float" not in code_of(first.value) and "int" not in code_of(first.value):
                return True
        if any(arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
            return True
    return False


def _aliases(value: cst.CSTNode, names: set[str]) -> bool:
    """``x = xtr`` or ``x = xtr if train else xte``, one of ``names`` each way."""
    if isinstance(value, cst.IfExp):
        return dotted(value.body) in names and dotted(value.orelse) in names
    return dotted(value) in names
