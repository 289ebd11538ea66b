"""XLA110: the pre-0.4 legacy typed tensors (``torch.cuda.FloatTensor(...)``, ``Tensor =
torch.cuda.FloatTensor if cuda else torch.FloatTensor``) become device-aware factories; an
availability flag that selects what cannot be converted stays off on XLA (on TorchTPU under
``--runtime torch-tpu``).

This module carries the plan out (the rewrite of each planned node); what is decided about a
file is legacy_type_plan.py's, what its expressions name legacy_type_names.py's."""

from __future__ import annotations

import libcst as cst

from codemods.devices.device_check import gpu_only_feature
from codemods.devices.legacy_type_names import CUDA_TYPES, LEGACY_DTYPES, may_plan
from codemods.devices.legacy_type_plan import LegacyTypePlan
from migrate_xla.rule.api import (
    CUDA_WORD,
    EQUAL,
    SAFE,
    TORCH,
    FileContext,
    Rule,
    names_trigger,
    parse_expr,
    snippet,
    words,
)


class LegacyTensorType(Rule):
    """Legacy typed tensors (``torch.cuda.FloatTensor`` and its kind) become device-aware factories.

    Pre-0.4 code, still alive in much-copied GAN collections, picks a tensor type on a flag
    (``cuda = True if torch.cuda.is_available() else False``; ``Tensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor``) and builds with it:
    ``Tensor(n, 1)`` (a size), ``Tensor(np.random.normal(...))`` (data), ``x.type(Tensor)``.
    XLA105 makes the flag true on XLA, and the CUDA type then crashes ("Found no NVIDIA
    driver"). Following the migration guide's "Device Handling" (create tensors on the
    device, move them with ``.to(device)``), each use becomes a factory with the type's
    dtype on the XLA device: ``torch.empty(n, 1, dtype=torch.float32, device=...)`` for a
    size, ``torch.tensor(data, dtype=..., device=...)`` for data (a list, a tuple, a numpy
    array), ``x.to(device, dtype)`` for ``.type(...)``; an argument that may be either
    keeps the CPU constructor, ``torch.FloatTensor(arg).to(device)``. The device is the
    file's device variable where one holds the XLA device (``device = torch.device("cuda"
    if torch.cuda.is_available() else "cpu")``), else ``torch_xla.device()``; a choice on
    the user's own flag keeps its CPU branch (``torch_xla.device() if args.cuda else
    "cpu"``), one on ``t.is_cuda`` takes ``t.device``. The assignments of the type go, and
    so does a name bound to the type's name (``Tensor = FloatTensor``), converted with it.

    A rewrite that makes a check true on XLA must not route into code that still needs
    CUDA. Where a type cannot be converted (``isinstance(x, Tensor)``, passed on,
    ``set_default_tensor_type``), the availability flag that selects it or guards it becomes
    ``False`` where it is set (``cuda = False``; ``args.cuda = not args.no_cuda and False``),
    so the script runs on the CPU as on a machine without a GPU, with a TODO, and the types
    chosen on it keep their CPU branch; an availability test written in the choice itself
    becomes ``False`` there. A flag whose branch holds a CUDA-only feature (``DataParallel``,
    fused optimizers, CUDA graphs and streams, as XLA104 tells them) or that is passed as
    ``fused=`` / ``capturable=`` is ``False`` in that place only. A CUDA type the rule leaves
    is flagged by XLA899.

    Under ``--runtime torch-tpu`` the device is TorchTPU's, ``torch.device("tpu")``
    (``torch.empty(n, 1, dtype=torch.float32, device=torch.device("tpu"))``), and the flags
    left off stay off on TorchTPU: XLA105 makes the availability test ``torch.tpu.is_available()``.
    """

    CODE = "XLA110"
    NAME = "legacy-tensor-type"
    SUMMARY = "torch.cuda.FloatTensor-style legacy types become torch.empty/tensor(..., dtype, device) and .to()"
    FIX = SAFE
    SEVERITY = "warning"  # what stays: a flag left off, with the CUDA type it selects
    TRIGGERS = (
        names_trigger(*CUDA_TYPES),
        words("fused", "capturable", "data_parallel", "DataParallel", "CUDAGraph", "make_graphed_callables")
        + r"|graph_pool_handle|Stream\b|cuda\.graph\b",
    )
    REQUIRES = (CUDA_WORD,)
    CONTEXT = (words("is_available"),)  # the availability flags the checks and choices read
    BEFORE = (
        "import numpy as np\n"
        "cuda = True if torch.cuda.is_available() else False\n"
        "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "valid = Tensor(imgs.size(0), 1).fill_(1.0)\n"
        "z = Tensor(np.random.normal(0, 1, (64, 100)))\n"
        "real = imgs.type(Tensor)\n"
    )
    AFTER = (
        "import numpy as np\n"
        "cuda = True if torch.cuda.is_available() else False\n"
        "valid = torch.empty(imgs.size(0), 1, dtype=torch.float32, device=torch_xla.device()).fill_(1.0)\n"
        "z = torch.tensor(np.random.normal(0, 1, (64, 100)), dtype=torch.float32, device=torch_xla.device())\n"
        "real = imgs.to(torch_xla.device(), torch.float32)\n"
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.plan = LegacyTypePlan(ctx, self.CODE)  # made by visit_Module, carried out by the leave_ methods
        self.planned = False

    # -- the plan, made once per file (legacy_type_plan.py) ------------------------------
    @classmethod
    def whole_module(cls, text: str, settings) -> bool:
        """A file whose text may need a plan is parsed whole: most such files are planned (12
        of 19 in torch's sources), and a plan needs the whole file (a slice would be parsed for nothing)."""
        return may_plan(text, gpu_only_feature(settings.runtime).search(text))

    def visit_Module(self, node: cst.Module) -> None:
        self.planned = False
        if not self.plan.wanted(node):
            return
        self.ctx.need_whole_module()
        self.planned = True
        self.plan.make(node)

    # -- the rewrite -------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.planned:
            return updated
        if id(original) in self.plan.tests_off:
            return self._off(original, updated)  # an availability test that selects a type left for CUDA
        factory = self.plan.calls.get(id(original))
        if factory is not None:
            return self._factory(original, updated, *factory)
        typed = self.plan.type_calls.get(id(original))
        if typed is None:
            return updated
        legacy, device = typed
        func = updated.func.with_changes(attr=cst.Name("to"))
        args = [
            cst.Arg(parse_expr(device), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            updated.args[0].with_changes(value=parse_expr(f"{self._torch()}.{LEGACY_DTYPES[legacy]}")),
            *updated.args[1:],
        ]
        replacement = updated.with_changes(func=func, args=args)
        self.ctx.forget_fixes_inside(original.args[0])
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: the legacy type's dtype, on the device",
            imports=self._imports(device),
            drop_if_unused=self.ctx.import_behind(original.args[0].value),
        )

    def _factory(self, original: cst.Call, updated: cst.Call, kind: str, legacy: str, device: str, shown: str):
        if kind == "cpu":
            inner = updated.with_changes(func=parse_expr(f"{self._torch()}.{legacy}"))
            replacement = cst.Call(
                func=cst.Attribute(value=inner, attr=cst.Name("to")), args=[cst.Arg(parse_expr(device))]
            )
            why = "a size or data: the CPU constructor, then moved"
        else:
            args = list(updated.args) or [cst.Arg(cst.Integer("0"))]
            replacement = updated.with_changes(func=parse_expr(f"{self._torch()}.{kind}"), args=args)
            replacement = _append(replacement, "dtype", parse_expr(f"{self._torch()}.{LEGACY_DTYPES[legacy]}"))
            replacement = _append(replacement, "device", parse_expr(device))
            why = "a size" if kind == "empty" else "data"
        self.ctx.forget_fixes_inside(original.func)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{shown}` -> `{snippet(replacement)}` ({why}): the legacy type's dtype, on the device",
            imports=self._imports(device),
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _torch(self) -> str:
        """The file's name for torch (``t`` after ``import torch as t``)."""
        return self.plan.names.binds("torch") or "torch"

    def _imports(self, device: str) -> list:
        imports = [TORCH] if self.plan.names.binds("torch") is None else []
        api = self.ctx.api
        return [*imports, *(i for i in api.imports if i not in imports)] if api.device in device else imports

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not self.planned:
            return updated
        if id(original) in self.plan.removed:
            if self.fixes(original):
                self.ctx.forget_fixes_inside(original)  # XLA104's .is_xla in the choice goes with it
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                f"`{snippet(original)}`: every use of the legacy type was converted; removed",
                drop_if_unused=[spec for ref in _type_refs(original.value) for spec in self.ctx.import_behind(ref)],
            )
        why = self.plan.flags_off.get(id(original))
        if why is None:
            return updated
        self.flag(original, why)
        if self.fixes(original):
            self.ctx.forget_fixes_inside(original.value)  # XLA105's torch_xla.device_count() goes with it
        value = self.replace(original.value, updated.value, cst.Name("False"), f"`{snippet(original)}` -> `False`")
        return updated.with_changes(value=value)

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if not self.planned or id(original) not in self.plan.tests_off:
            return updated
        return self._off(original, updated)

    leave_Attribute = leave_Name  # if args.cuda: ... DataParallel

    def _off(self, original: cst.BaseExpression, updated: cst.BaseExpression):
        self.flag(original, self.plan.tests_off[id(original)])
        if self.fixes(original):
            self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            cst.Name("False", lpar=updated.lpar, rpar=updated.rpar),
            f"`{snippet(original)}` -> `False`",
        )


def _type_refs(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The types a value names: both branches of a choice, or the value."""
    return [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]


def _append(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    new = cst.Arg(value, keyword=cst.Name(keyword), equal=EQUAL)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new])
