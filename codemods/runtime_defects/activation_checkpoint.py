"""XLA906: torch's activation checkpointing, which fails on the XLA device, becomes torch_xla's
where it computes the same."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC, RenamesReferences
from codemods.shared.definitions import with_definitions
from migrate_xla.rule.api import SAFE, TORCH, names_trigger, snippet, words

CHECKPOINT = ("torch.utils.checkpoint.checkpoint",)
# what runs torch's checkpoint inside and has no form here: flagged
SEQUENTIAL = ("torch.utils.checkpoint.checkpoint_sequential",)
WRAPPERS = (
    "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper",
    "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing",
)
HELPER = "xla_checkpoint"
HELPER_DEF = f'''
def {HELPER}(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """torch.utils.checkpoint.checkpoint on the XLA device, written by xla-migrate (XLA906): torch's
    fails there (it asks for a ``torch.xla`` device module torch_xla 2.9 does not register);
    torch_xla's recomputes the function's activations in the backward pass behind an
    optimization barrier, so that XLA does not merge the recomputation into the forward. It
    has only the reentrant form, which passes no keyword to the function and gives the
    function's parameters no gradient unless an input requires one: there the function runs
    whole (the same values and gradients, without the memory saved) ({DEFECTS_DOC})."""
    import torch_xla.utils.checkpoint

    for option in ("context_fn", "determinism_check", "debug"):  # torch's; none changes what is computed
        kwargs.pop(option, None)
    grad = torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    if kwargs or not grad:
        return function(*args, **kwargs)
    return torch_xla.utils.checkpoint.checkpoint(function, *args, preserve_rng_state=preserve_rng_state)
'''
FAILS = (
    "torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which "
    "torch_xla 2.9 does not register (\"module 'torch' has no attribute 'xla'\"; measured on CPU PJRT, "
    f"{DEFECTS_DOC})"
)


class ActivationCheckpoint(RenamesReferences):
    """``torch.utils.checkpoint.checkpoint``, called or passed on (``partial(checkpoint,
    use_reentrant=False)``), becomes ``xla_checkpoint``, a function written into the file that
    runs torch_xla's checkpoint where it computes the same; ``checkpoint_sequential`` and FSDP's
    ``checkpoint_wrapper`` / ``apply_activation_checkpointing`` are flagged.

    Measured on torch_xla 2.9.0, CPU PJRT (tests/test_runtime_defects.py): torch's
    ``checkpoint`` of a module on the XLA device raises ``AttributeError: module 'torch' has no
    attribute 'xla'``, reentrant or not, whether it preserves the RNG state or not (torch looks
    the device's module up as ``torch.<device type>``; "torch has no module of `xla`" where it
    preserves no RNG state), and so does FSDP's ``checkpoint_wrapper``. Trainers of large models checkpoint
    their blocks (a GPT's ``checkpoint(block, x, use_reentrant=False)``), and the migrated run
    died at its first step. torch_xla's own ``torch_xla.utils.checkpoint.checkpoint`` adds
    optimization barriers (without them XLA's common-subexpression pass would merge the
    recomputation into the forward and keep the activations), but it is torch's reentrant form
    only: it refuses ``use_reentrant=False`` and keywords for the function, and where no input
    requires a gradient (a first block fed the data) its output requires none, so the
    function's parameters would get no gradient. The function the fix writes runs torch_xla's
    checkpoint where an input requires a gradient and nothing is passed by keyword, and the
    function whole otherwise: the same values and gradients everywhere, the memory saved where
    torch_xla can save it. Safe, applied by default: the code as written cannot run on XLA.
    ``checkpoint_sequential`` and FSDP's wrappers run torch's checkpoint inside and are flagged
    with what to write (``xla_checkpoint`` in the layers' forward, or
    ``torch_xla.distributed.fsdp.checkpoint_module``). PyTorch/XLA only, as the family.
    """

    CODE = "XLA906"
    NAME = "activation-checkpoint"
    SUMMARY = (
        "torch.utils.checkpoint.checkpoint, which fails on the XLA device, becomes torch_xla's where it computes "
        "the same; checkpoint_sequential and FSDP's checkpoint wrappers are flagged"
    )
    FIX = SAFE
    SEVERITY = "error"
    TRIGGERS = (names_trigger(*CHECKPOINT, *SEQUENTIAL, *WRAPPERS),)
    # each of those names resolves through an import that spells ``utils`` or ``_checkpoint`` (not
    # torch.distributed.checkpoint's, which names checkpoints everywhere)
    REQUIRES = (words("utils", "_checkpoint"),)
    RUNTIMES = ("torch-xla",)
    BEFORE = "from torch.utils.checkpoint import checkpoint\n\nx = checkpoint(block, x, use_reentrant=False)\n"
    AFTER = "\n" + HELPER_DEF + f"\n\nx = {HELPER}(block, x, use_reentrant=False)\n"  # the import goes

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.attributes: set[int] = set()  # names that are an attribute's, not references
        self.first_top: cst.CSTNode | None = None  # the top-level statement of the first fix
        self.defined = False

    def visit_Module(self, node: cst.Module) -> None:
        self.defined = any(isinstance(s, cst.FunctionDef) and s.name.value == HELPER for s in node.body)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attributes.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func)
        if name in SEQUENTIAL:
            self.flag(
                node,
                f"`{snippet(node)}`: {FAILS}, and torch_xla has no checkpoint_sequential: call `{HELPER}` (what "
                f"XLA906 writes for `checkpoint`) on each segment instead",
            )
        elif name in WRAPPERS:
            self.flag(
                node,
                f"`{snippet(node)}`: the wrapped layers run torch's checkpoint: {FAILS}; wrap them with "
                "`torch_xla.distributed.fsdp.checkpoint_module(layer)` instead, or call torch_xla's "
                "`torch_xla.utils.checkpoint.checkpoint` in their forward",
            )

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self.attributes or original.value not in self.ctx.aliases:
            return updated
        return self._reference(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        if self.in_import or self.qualname(original) not in CHECKPOINT:
            return updated
        head = original
        while isinstance(head, cst.Attribute):
            head = head.value
        replaced = self.replace(
            original,
            updated,
            cst.Name(HELPER),
            f"`{snippet(original)}`: {FAILS}; the fix calls `{HELPER}`, written after the file's imports: "
            "torch_xla's checkpoint where an input requires a gradient and nothing goes by keyword (its "
            "reentrant form), the function run whole otherwise (the same values and gradients)",
            imports=[TORCH],
            drop_if_unused=[self.ctx.bindings[head.value]] if head.value in self.ctx.bindings else [],
        )
        if replaced is not updated and self.first_top is None and self.ctx.statements:
            self.first_top = self.ctx.statements[0]
        return replaced

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.first_top is None or self.defined:
            return updated
        return with_definitions(original, updated, [HELPER_DEF], self.first_top)
