"""XLA104: checks for CUDA tensors and devices (``x.is_cuda``, ``device.type == "cuda"``)
check for XLA (for the TPU under ``--runtime torch-tpu``), unless they guard a GPU-only
feature (then they stay, and XLA899 leaves them)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.devices.cuda_guards import CudaGuards, cuda_guards
from codemods.shared.device_values import (
    CUDA_STRING,
    KEPT_CUDA_CHECKS,
    ON_RUNTIME,
    device_string,
    is_cuda_literal,
    target_name,
)
from migrate_xla.rule.api import SAFE, FileContext, Rule, children, code_of, string_value, subtree

# What a CUDA check may guard that XLA does not have, as a branch spells it: fused /
# capturable optimizers, DataParallel, CUDA graphs and streams. Not what other rules
# remove from the branch (pinned memory, cuDNN flags, a GradScaler, "nccl"): a second run
# would find the branch without it and decide otherwise.
GPU_ONLY_FEATURE = re.compile(
    r"\b(fused|capturable|data_parallel|DataParallel|CUDAGraph|make_graphed_callables"
    r"|graph_pool_handle|Stream)\b|\bcuda\.graph\b"
)
# Names whose value a check decides is such a feature: use_fused, pin, scaler_enabled
GPU_ONLY_NAME = re.compile(
    r"fused|capturable|(^|_)pin(_|$)|pin_memory|data_?parallel|cudnn|cuda_?graph|scaler|stream", re.I
)
# TorchTPU has streams and events (torch.tpu.Stream, torch.tpu.stream; the cuda_only rules
# move CUDA's there): under torch-tpu a check guarding one is a check for the TPU
TPU_GPU_ONLY_FEATURE = re.compile(
    r"\b(fused|capturable|data_parallel|DataParallel|CUDAGraph|make_graphed_callables|graph_pool_handle)\b"
    r"|\bcuda\.graph\b"
)
TPU_GPU_ONLY_NAME = re.compile(
    r"fused|capturable|(^|_)pin(_|$)|pin_memory|data_?parallel|cudnn|cuda_?graph|scaler", re.I
)
GPU_ONLY = {"torch-xla": (GPU_ONLY_FEATURE, GPU_ONLY_NAME), "torch-tpu": (TPU_GPU_ONLY_FEATURE, TPU_GPU_ONLY_NAME)}


def gpu_only_feature(runtime: str) -> re.Pattern:
    """What a CUDA check may guard that the runtime (``ctx.runtime``) does not have, as a branch spells it."""
    return GPU_ONLY[runtime][0]


GPU_ONLY_KEYWORDS = frozenset({"fused", "capturable", "pin_memory"})
GRAD_SCALERS = frozenset(
    {
        "torch.GradScaler",
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
    }
)


class CudaDeviceCheck(Rule):
    """Checks for CUDA tensors and devices now check for XLA, unless they guard a GPU-only feature.

    ``t.is_cuda`` becomes ``t.is_xla``; ``device.type == "cuda"`` and ``"cuda" in
    str(device)`` compare with ``"xla"``, so branches written for the GPU (moving data,
    synchronising, picking the device or the autocast type) now run on the device that
    took the GPU's place.

    A check that guards something only CUDA has stays a CUDA check, so that it is off
    on XLA: a fused or capturable optimizer (``use_fused = fused_available and
    device_type == "cuda"``; ``fused=True`` on XLA tensors raises), ``DataParallel``
    (``if input.is_cuda and self.ngpu > 1: nn.parallel.data_parallel(...)`` would route
    XLA tensors into CUDA-only replication), CUDA graphs and streams, a GradScaler's
    ``enabled=``, a flag named for pinned memory or cuDNN. Told apart by what the check
    decides: the branch an ``if`` takes when the check holds, the name it is assigned to
    (``use_fused``, ``pin_memory``), or the ``fused=`` / ``capturable=`` /
    ``pin_memory=`` argument it is passed as. A branch that only pins memory or sets cuDNN
    flags becomes an XLA branch: XLA301 and XLA107 take those out of it. So does a check in a
    method that reads state only CUDA code sets: an attribute given a value only behind a
    ``torch.cuda.is_available()`` that XLA105 keeps for CUDA (denoising-diffusion-pytorch's
    ``Attend``: ``self.cuda_config`` is None unless the GPU's properties were read, and
    ``config = self.cuda_config if q.is_cuda else self.cpu_config`` would pick None on XLA).

    Under ``--runtime torch-tpu`` the checks become TorchTPU's: ``t.is_tpu`` (torch
    generates it for the renamed device) and ``device.type == "tpu"``. TorchTPU has streams
    and events (``torch.tpu.Stream``), so a check that guards a stream is a TPU check too;
    the other GPU-only features keep their CUDA check.
    """

    CODE = "XLA104"
    NAME = "cuda-device-check"
    SUMMARY = "t.is_cuda and device.type == 'cuda' checks become XLA checks (not those guarding CUDA-only features)"
    FIX = SAFE
    SEVERITY = "info"  # what stays: a check left for CUDA on purpose
    TRIGGERS = (r"\.is_cuda\b", CUDA_STRING)
    BEFORE = (
        'if device.type == "cuda":\n    pass\nif x.is_cuda:\n    pass\n'
        'use_fused = fused_available and device_type == "cuda"\n'
    )
    AFTER = (
        'if device.type == "xla":\n    pass\nif x.is_xla:\n    pass\n'
        'use_fused = fused_available and device_type == "cuda"\n'
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.kept: dict[int, str] = ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})  # check id -> what it guards
        self.features, self.feature_names = GPU_ONLY[ctx.runtime]
        self.guards = CudaGuards()

    def visit_Module(self, node: cst.Module) -> None:
        self.guards = cuda_guards(self.ctx, node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A method that reads state only CUDA code sets (``self.cuda_config``, given a value behind a
        kept ``torch.cuda.is_available()``): its CUDA checks pick that state, which XLA never gets."""
        if not self.guards.state:
            return
        read = next(
            (
                n.attr.value
                for n in subtree(node.body)
                if isinstance(n, cst.Attribute)
                and isinstance(n.value, cst.Name)
                and n.value.value == "self"
                and n.attr.value in self.guards.state
            ),
            None,
        )
        if read is not None:
            for check in subtree(node.body):
                if isinstance(check, cst.Attribute) and self._is_check(check):
                    self.kept.setdefault(id(check), f"`self.{read}` (set only behind a CUDA check)")

    def _is_check(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute):
            return node.attr.value == "is_cuda" and self.qualname(node) is None
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(t.comparator for t in node.comparisons)]
            return any(is_cuda_literal(o) for o in operands) and not all(string_value(o) is not None for o in operands)
        return False

    def _checks(self, node: cst.CSTNode, holds: bool = True):
        """(check, whether the condition holds when the check does) for the CUDA checks in a condition."""
        if self._is_check(node):
            negated = isinstance(node, cst.Comparison) and any(
                isinstance(t.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)) for t in node.comparisons
            )
            yield node, holds != negated
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            yield from self._checks(node.expression, not holds)
        else:
            for child in children(node):
                yield from self._checks(child, holds)

    def _keep_if_guarding(self, condition: cst.CSTNode, when_true, when_false) -> None:
        for check, holds in self._checks(condition):
            branch = when_true if holds else when_false
            found = self.features.search(code_of(branch)) if branch is not None else None
            if found:
                self.kept[id(check)] = f"`{found.group(0)}`"

    def _keep_all(self, value: cst.CSTNode, what: str) -> None:
        for check, _ in self._checks(value):
            self.kept[id(check)] = what

    def visit_If(self, node: cst.If) -> None:
        self._keep_if_guarding(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._keep_if_guarding(node.test, node.body, node.orelse)

    def visit_Assign(self, node: cst.Assign) -> None:
        names = [target_name(t.target) for t in node.targets]
        found = [n for n in names if self.feature_names.search(n)]
        if found:
            self._keep_all(node.value, f"`{found[0]}`")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = target_name(node.target)
        if node.value is not None and self.feature_names.search(name):
            self._keep_all(node.value, f"`{name}`")

    def visit_Call(self, node: cst.Call) -> None:
        scaler = self.qualname(node.func) in GRAD_SCALERS
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in GPU_ONLY_KEYWORDS or (scaler and keyword == "enabled"):
                self._keep_all(arg.value, f"`{keyword}=`")

    def _left_for_cuda(self, original: cst.CSTNode, updated: cst.CSTNode) -> bool:
        what = self.kept.get(id(original))
        if what is None:
            return False
        self.kept[id(updated)] = what
        self.note(
            original,
            f"`{code_of(original)}` guards {what}, which only CUDA has: left as a CUDA check, "
            f"so it stays off on {ON_RUNTIME[self.ctx.runtime]}",
        )
        return True

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "is_cuda" or self.qualname(original) is not None:
            return updated
        if self._left_for_cuda(original, updated):
            return updated
        check = f"is_{self.ctx.api.device_type}"  # Tensor.is_xla; Tensor.is_tpu, generated for TorchTPU's device
        return self.replace(
            original,
            updated,
            updated.with_changes(attr=cst.Name(check)),
            f"`.is_cuda` -> `.{check}`",
        )

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        """``"cuda" if x.is_cuda else "cpu"``: the device string the check picks becomes the
        device's, or the converted check would pick "cuda" on XLA."""
        checks = [holds for check, holds in self._checks(original.test) if id(check) not in self.kept]
        if len(checks) != 1:
            return updated
        branch = "body" if checks[0] else "orelse"
        old = getattr(original, branch)
        if not is_cuda_literal(old):
            return updated
        self.ctx.forget_fixes_inside(old)
        new = device_string(old, self.ctx.api.device_type)
        # reported on the string, whose fixes XLA102 forgets when it converts the whole choice
        message = f"`{code_of(old)}` -> `{code_of(new)}`: the device its check now picks"
        return updated.with_changes(**{branch: self.replace(old, getattr(updated, branch), new, message)})

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison):
        if not self._is_check(original) or self._left_for_cuda(original, updated):
            return updated
        device_type = self.ctx.api.device_type

        def swap(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
            if not is_cuda_literal(old):
                return new
            self.ctx.forget_fixes_inside(old)  # "cuda:{}".format(...): the index goes
            return device_string(old, device_type)

        replacement = updated.with_changes(
            left=swap(original.left, updated.left),
            comparisons=[
                u.with_changes(comparator=swap(o.comparator, u.comparator))
                for o, u in zip(original.comparisons, updated.comparisons)
            ],
        )
        return self.replace(original, updated, replacement, f'`{code_of(original)}` now checks for "{device_type}"')
