"""XLA101-XLA103: the CUDA device, however it is spelled, becomes the XLA device (the
migration guide's "Device Handling"), or TorchTPU's ``tpu`` device under ``--runtime
torch-tpu``: ``torch.device("cuda...")`` (XLA101), a device name kept as a string
(XLA102), ``.cuda()`` (XLA103)."""

from __future__ import annotations

import libcst as cst

from codemods.shared.device_values import (
    AMP_DEVICE_CALLS,
    AVAILABILITY_TEST,
    CUDA_STRING,
    cuda_choice,
    device_string,
    is_cuda_literal,
    is_cuda_value,
    is_other_device,
    moved_to,
    names_device,
    string_imports,
    target_name,
)
from migrate_xla.rule.api import EQUAL, SAFE, Rule, call_arg, code_of, parse_expr, string_value, words


def picks_by_availability(choice: cst.CSTNode) -> bool:
    """Whether a CUDA/CPU choice only asks whether a GPU is there (then it means the XLA device)."""
    test = cuda_choice(choice)
    return test is not None and bool(AVAILABILITY_TEST.fullmatch(code_of(test)))


def choice_note(node: cst.CSTNode) -> str:
    """What the message adds about a CUDA/CPU choice on anything but GPU availability."""
    test = cuda_choice(node)
    if test is None or picks_by_availability(node):
        return ""
    return f"; the choice on `{code_of(test)}` is kept: its CPU branch still runs on the CPU"


def with_xla_branch(updated: cst.IfExp, cuda_first: bool, xla: cst.BaseExpression) -> cst.IfExp:
    """The choice ``updated`` with its CUDA branch (the first when ``cuda_first``) replaced by ``xla``."""
    return updated.with_changes(body=xla) if cuda_first else updated.with_changes(orelse=xla)


class CudaDevice(Rule):
    """``torch.device("cuda...")`` becomes the XLA device.

    Guide, "Device Handling": ``torch.device("cuda:0" if torch.cuda.is_available() else
    "cpu")`` becomes the XLA device: the availability test means "use the accelerator".
    An index (``"cuda:1"``, ``torch.device("cuda", rank)``) is dropped: on XLA each
    process owns its device, and ``torch_xla.device()`` returns it. A CUDA/CPU choice on
    anything else (the user's own flag, ``args.cuda``, ``use_cuda = not args.no_cuda and
    ...``) keeps its condition and its CPU branch: ``torch.device("xla" if args.cuda else
    "cpu")``, so a run the user sends to the CPU still runs there.

    Under ``--runtime torch-tpu`` the device is TorchTPU's, ``torch.device("tpu")`` (and
    ``torch.device("tpu" if args.cuda else "cpu")``): ``"tpu"`` names the process's current
    TPU as ``"cuda"`` named its current GPU (``torch.tpu.set_device``, which XLA105 makes of
    ``torch.cuda.set_device``, picks it).
    """

    CODE = "XLA101"
    NAME = "cuda-device"
    SUMMARY = "torch.device('cuda...') becomes torch_xla.device()"
    FIX = SAFE
    # It rewrites torch.device calls whose type is a "cuda..." string (or a choice of one)
    TRIGGERS = (words("device"),)
    REQUIRES = (CUDA_STRING,)
    BEFORE = (
        'device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n'
        'device = torch.device("cuda" if args.cuda else "cpu")\n'
    )
    AFTER = 'device = torch_xla.device()\ndevice = torch.device("xla" if args.cuda else "cpu")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.device":
            return updated
        kind = call_arg(original, 0, "type")
        if kind is None or not is_cuda_value(kind.value):
            return updated
        if cuda_choice(kind.value) is not None and not picks_by_availability(kind.value):
            # torch.device("cuda" if args.cuda else "cpu"): only the CUDA name changes
            choice = kind.value
            cuda_first = is_cuda_value(choice.body)
            self.ctx.forget_fixes_inside(choice.body if cuda_first else choice.orelse)
            index = next(i for i, a in enumerate(original.args) if a is kind)
            new_choice = with_xla_branch(
                updated.args[index].value,
                cuda_first,
                device_string(choice.body if cuda_first else choice.orelse, self.ctx.api.device_type),
            )
            arg = updated.args[index].with_changes(value=new_choice, comma=cst.MaybeSentinel.DEFAULT)
            replacement = updated.with_changes(args=[arg])  # an index means nothing on the CPU or XLA
            return self.replace(
                original,
                updated,
                replacement,
                f"`{code_of(original)}` -> `{code_of(replacement)}`{choice_note(choice)}",
                imports=string_imports(self.ctx.api),
            )
        return self._xla_device(original, updated)

    def _xla_device(self, original: cst.CSTNode, updated: cst.CSTNode):
        """The whole expression becomes the run's device, ``torch_xla.device()`` or
        ``torch.device("tpu")`` (no fix inside it stays)."""
        self.ctx.forget_fixes_inside(original)
        device = self.ctx.api.device
        return self.replace(
            original,
            updated,
            parse_expr(device),
            f"`{code_of(original)}` -> `{device}`",
            imports=self.ctx.api.imports,
        )

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        # torch.device("cuda") if COND else torch.device("cpu")
        branches = [original.body, original.orelse]
        devices = [b for b in branches if isinstance(b, cst.Call) and self.qualname(b.func) == "torch.device"]
        if len(devices) != 2:
            return updated
        kinds = [call_arg(d, 0, "type") for d in devices]
        if any(k is None for k in kinds):
            return updated
        flags = [is_cuda_value(k.value) for k in kinds]
        others = [is_other_device(k.value) for k in kinds]
        if sorted(flags) != [False, True] or not any(others):
            return updated
        if not AVAILABILITY_TEST.fullmatch(code_of(original.test)):
            return updated  # the user's own choice: leave_Call rewrote the CUDA branch
        return self._xla_device(original, updated)


class CudaDeviceString(Rule):
    """Device names kept as strings: ``"cuda"`` becomes ``"xla"`` where it names a device.

    Scripts keep the device in variables (also as the fallback of a device the user may name,
    ``args.device or ("cuda" if ... else "cpu")``), config dicts, argparse defaults, function
    defaults, ``device=`` / ``.to(...)`` arguments and the return values of helpers
    named like ``get_device()``. ``"xla"`` is the guide's
    ``torch.device('xla')`` spelled as a string; ``import torch_xla`` is added so that
    the XLA backend is registered before the string is used. The device of ``autocast``
    and ``GradScaler`` is left to the mixed-precision rules (XLA4xx), which change its
    float16 to bfloat16 with it.

    Under ``--runtime torch-tpu`` the name is ``"tpu"``, TorchTPU's device; nothing is
    imported for it: torch loads torch_tpu, which names the device, by itself.
    """

    CODE = "XLA102"
    NAME = "cuda-device-string"
    SUMMARY = "'cuda' device strings in variables, configs, defaults and .to() become 'xla'"
    FIX = SAFE
    TRIGGERS = (CUDA_STRING, r"""['"]cpu['"]\s+if""")
    BEFORE = 'parser.add_argument("--device", default="cuda")\nx = x.to("cuda:0")\n'
    AFTER = 'parser.add_argument("--device", default="xla")\nx = x.to("xla")\n'

    def _to_xla(self, original: cst.CSTNode, updated: cst.BaseExpression, where: str):
        device_type = self.ctx.api.device_type
        if isinstance(original, cst.IfExp) and not picks_by_availability(original):
            # "cuda" if args.cuda else "cpu": the user's choice stays, the CUDA name changes
            cuda_first = is_cuda_literal(original.body)
            cuda = original.body if cuda_first else original.orelse
            self.ctx.forget_fixes_inside(cuda)
            replacement = with_xla_branch(updated, cuda_first, device_string(cuda, device_type))
            shown = code_of(replacement)
        else:
            self.ctx.forget_fixes_inside(original)  # a dropped availability test or formatted index
            replacement = device_string(original if not isinstance(original, cst.IfExp) else original.body, device_type)
            shown = f'"{device_type}"'
        return self.replace(
            original,
            updated,
            replacement,
            f"device `{code_of(original)}` {where} -> `{shown}`{choice_note(original)}",
            imports=string_imports(self.ctx.api),
        )

    def _assigned(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        """A device variable's value: a CUDA name, or the CUDA fallback of ``args.device or "cuda"``
        (``args.device or ("cuda" if torch.cuda.is_available() else "cpu")``)."""
        if is_cuda_value(original):
            return self._to_xla(original, updated, "assigned")
        if (
            isinstance(original, cst.BooleanOperation)
            and isinstance(original.operator, cst.Or)
            and is_cuda_value(original.right)
        ):
            return updated.with_changes(right=self._to_xla(original.right, updated.right, "as the fallback"))
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if any(names_device(target_name(t.target)) for t in original.targets):
            return updated.with_changes(value=self._assigned(original.value, updated.value))
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        if original.value is not None and names_device(target_name(original.target)):
            return updated.with_changes(value=self._assigned(original.value, updated.value))
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement):
        if is_cuda_value(original.value) and names_device(string_value(original.key) or ""):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "in a dict"))
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return):
        functions = [s for s in self.ctx.statements if isinstance(s, cst.FunctionDef)]
        if original.value is None or not functions or not names_device(functions[-1].name.value):
            return updated
        if is_cuda_value(original.value):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "returned"))
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        if original.default is not None and is_cuda_value(original.default) and names_device(original.name.value):
            return updated.with_changes(default=self._to_xla(original.default, updated.default, "as a default"))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if self.qualname(func) in AMP_DEVICE_CALLS:
            return updated
        method = func.attr.value if isinstance(func, cst.Attribute) else ""
        changed = []
        for index, arg in enumerate(original.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if not is_cuda_value(arg.value) or keyword == "pin_memory_device":  # XLA301 drops that one
                continue
            if keyword is not None and names_device(keyword):
                where = f"as `{keyword}=`"
            elif method == "to" and (keyword is None and index == 0):
                where = "in `.to()`"
            elif method == "add_argument" and keyword == "default":
                where = "as an argparse default"
            elif self.qualname(func) in ("os.environ.get", "os.getenv") and index == 1:
                where = "as an environment default"
            else:
                continue
            changed.append((index, self._to_xla(arg.value, updated.args[index].value, where)))
        if not changed:
            return updated
        args = list(updated.args)
        for index, value in changed:
            args[index] = args[index].with_changes(value=value)
        return updated.with_changes(args=args)


class CudaMethod(Rule):
    """``.cuda()`` on tensors, modules and losses becomes ``.to(torch_xla.device())``.

    Matched by shape: any ``x.cuda(...)`` call is taken to be ``Tensor.cuda`` or
    ``Module.cuda``, and the diagnostic says it guessed. A device index is dropped
    (each XLA process owns one device); ``non_blocking`` (keyword or second
    positional argument) and ``memory_format=`` are kept: ``Tensor.to`` takes them too.

    Under ``--runtime torch-tpu`` it becomes ``.to("tpu")``, TorchTPU's device by name, with
    the same arguments kept, rather than the ``.tpu()`` torch generates for the device:
    ``Tensor.tpu`` takes no ``memory_format=``, and ``.to("tpu")`` is what XLA102 makes of
    ``.to("cuda")``, so a file moves its values one way.
    """

    CODE = "XLA103"
    NAME = "cuda-method"
    SUMMARY = ".cuda() on tensors and modules becomes .to(torch_xla.device())"
    FIX = SAFE
    TRIGGERS = (r"\.cuda\(",)
    BEFORE = "model = Net().cuda()\nx = x.cuda(non_blocking=True)\n"
    AFTER = "model = Net().to(torch_xla.device())\nx = x.to(torch_xla.device(), non_blocking=True)\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return updated
        if (self.qualname(original.func) or "").startswith("torch."):  # torch.cuda(...): not a method call
            return updated
        kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        blocking = call_arg(updated, 1, None)  # Tensor.cuda(device, non_blocking)
        if blocking is not None:
            kept.insert(0, blocking.with_changes(keyword=cst.Name("non_blocking"), equal=EQUAL))
        device, imports = moved_to(self.ctx.api)  # torch_xla.device(); "tpu"
        args = [cst.Arg(parse_expr(device)), *kept]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
        return self.replace(
            original,
            updated,
            replacement,
            f"`.cuda()` -> `.to({device})` (matched by shape: assumed to be a tensor or module)",
            imports=imports,
        )
