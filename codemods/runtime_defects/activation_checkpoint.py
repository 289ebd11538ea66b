"""XLA906: torch's activation checkpointing, which fails on the XLA device, becomes torch_xla's
where it computes the same."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC, RenamesReferences
from codemods.shared.definitions import Written
from migrate_xla.rule.api import SAFE, TORCH, names_trigger, snippet, words

CHECKPOINT = ("torch.utils.checkpoint.checkpoint",)
# what runs torch's checkpoint inside and has no form here: flagged
SEQUENTIAL = ("torch.utils.checkpoint.checkpoint_sequential",)
WRAPPERS_MODULE = "torch.distributed.algorithms._checkpoint.checkpoint_wrapper"
WRAPPER, APPLY = f"{WRAPPERS_MODULE}.checkpoint_wrapper", f"{WRAPPERS_MODULE}.apply_activation_checkpointing"
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
WRAPPER_HELPER = "xla_checkpoint_wrapper"
WRAPPER_DEF = f'''
def {WRAPPER_HELPER}(module, checkpoint_impl=None, checkpoint_fn=None, **checkpoint_fn_kwargs):
    """FSDP's checkpoint_wrapper on the XLA device, written by xla-migrate (XLA906): torch's wrapper
    runs torch's checkpoint, which fails there; torch_xla's ``checkpoint_module`` gives the module a
    forward that recomputes its activations in the backward pass (torch_xla's reentrant checkpoint
    where an input requires a gradient, the forward whole otherwise: the same values and gradients,
    whichever checkpoint the options chose). The module is changed in place and returned: no
    wrapper module, its parameters keep their names ({DEFECTS_DOC})."""
    from torch_xla.distributed.fsdp import checkpoint_module

    return checkpoint_module(module)
'''
APPLY_HELPER = "xla_apply_activation_checkpointing"
APPLY_DEF = f'''
def {APPLY_HELPER}(model, checkpoint_wrapper_fn=None, check_fn=lambda _: True):
    """FSDP's apply_activation_checkpointing on the XLA device, written by xla-migrate (XLA906): each
    module inside ``model`` that ``check_fn`` picks gets its activations recomputed in the backward
    pass by ``{WRAPPER_HELPER}``, whichever wrapper ``checkpoint_wrapper_fn`` names (torch's run
    torch's checkpoint, which fails there; an offloading one's host memory is not XLA's)."""
    for module in list(model.modules())[1:]:
        if check_fn(module):
            {WRAPPER_HELPER}(module)
    return model
'''
# what each name the rule renames becomes: a function written into the file
RENAMED = {CHECKPOINT[0]: HELPER, WRAPPER: WRAPPER_HELPER, APPLY: APPLY_HELPER}
WRITTEN = {HELPER: HELPER_DEF, WRAPPER_HELPER: WRAPPER_DEF, APPLY_HELPER: APPLY_DEF}
FAILS = (
    "torch's activation checkpointing fails on the XLA device: it asks for a `torch.xla` device module, which "
    "torch_xla 2.9 does not register (\"module 'torch' has no attribute 'xla'\"; measured on CPU PJRT, "
    f"{DEFECTS_DOC})"
)


class ActivationCheckpoint(RenamesReferences):
    """``torch.utils.checkpoint.checkpoint``, called or passed on (``partial(checkpoint,
    use_reentrant=False)``), becomes ``xla_checkpoint``, a function written into the file that
    runs torch_xla's checkpoint where it computes the same; FSDP's ``checkpoint_wrapper`` and
    ``apply_activation_checkpointing`` become ``xla_checkpoint_wrapper`` and
    ``xla_apply_activation_checkpointing``, written too, which give the layers torch_xla's
    checkpointed forward; ``checkpoint_sequential`` is flagged.

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
    FSDP's wrappers run torch's checkpoint inside: ``checkpoint_wrapper(layer, ...)`` becomes
    torch_xla's ``checkpoint_module(layer)`` (the same policy: its reentrant checkpoint where an
    input requires a gradient; in place, so the parameters keep their names, where torch's wrapper
    module renames them and its state-dict hooks name them back), and
    ``apply_activation_checkpointing(model, checkpoint_wrapper_fn=..., check_fn=...)`` applies it
    to each module inside ``model`` that ``check_fn`` picks, as torch applies its wrapper (the
    wrapper chosen, reentrant, not or offloading, computes the same). One given an
    ``auto_wrap_policy`` and ``checkpoint_sequential`` (no form in torch_xla) are flagged with
    what to write. PyTorch/XLA only, as the family.
    """

    CODE = "XLA906"
    NAME = "activation-checkpoint"
    SUMMARY = (
        "torch.utils.checkpoint.checkpoint and FSDP's checkpoint wrappers, which fail on the XLA device, become "
        "torch_xla's where it computes the same; checkpoint_sequential is flagged"
    )
    FIX = SAFE
    SEVERITY = "error"
    TRIGGERS = (names_trigger(*RENAMED, *SEQUENTIAL),)
    # each of those names resolves through an import that spells ``utils`` or ``_checkpoint`` (not
    # torch.distributed.checkpoint's, which names checkpoints everywhere)
    REQUIRES = (words("utils", "_checkpoint"),)
    RUNTIMES = ("torch-xla",)
    BEFORE = "from torch.utils.checkpoint import checkpoint\n\nx = checkpoint(block, x, use_reentrant=False)\n"
    AFTER = "\n" + HELPER_DEF + f"\n\nx = {HELPER}(block, x, use_reentrant=False)\n"  # the import goes

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.attributes: set[int] = set()  # names that are an attribute's, not references
        self.left: set[int] = set()  # references in calls that keep their flag (an auto-wrap policy)
        self.written = Written(ctx, WRITTEN, {APPLY_HELPER: (WRAPPER_HELPER,)})

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
        elif name == APPLY and any(a.keyword is not None and a.keyword.value == "auto_wrap_policy" for a in node.args):
            self.left.add(id(node.func))
            self.flag(
                node,
                f"`{snippet(node)}`: the wrapped layers run torch's checkpoint: {FAILS}; with an auto-wrap policy "
                "it has no form here: give each layer the policy picks "
                "`torch_xla.distributed.fsdp.checkpoint_module(layer)` instead",
            )

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self.attributes or original.value not in self.ctx.aliases:
            return updated
        return self._reference(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        helper = None if self.in_import or id(original) in self.left else RENAMED.get(self.qualname(original))
        if helper is None:
            return updated
        head = original
        while isinstance(head, cst.Attribute):
            head = head.value
        why = (
            f"{FAILS}; the fix calls `{HELPER}`, written after the file's imports: torch_xla's checkpoint where an "
            "input requires a gradient and nothing goes by keyword (its reentrant form), the function run whole "
            "otherwise (the same values and gradients)"
            if helper == HELPER
            else f"the wrapped layers run torch's checkpoint: {FAILS}; the fix calls `{helper}`, written after the "
            "file's imports, which gives each layer torch_xla's checkpointed forward "
            "(`torch_xla.distributed.fsdp.checkpoint_module`, in place: the parameters keep their names)"
        )
        replaced = self.replace(
            original,
            updated,
            cst.Name(helper),
            f"`{snippet(original)}`: {why}",
            imports=[TORCH] if helper == HELPER else [],
            drop_if_unused=[self.ctx.bindings[head.value]] if head.value in self.ctx.bindings else [],
        )
        if replaced is not updated:
            self.written.use(helper)
        return replaced

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)
