"""XLA903: TorchScript tracing of a model on the XLA device, which torch_xla cannot do for a
convolution: TensorBoard's ``add_graph`` traces a CPU copy of the model (safe fix), a
``torch.jit.trace`` of its own is flagged."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC
from migrate_xla.rule.api import ON_ACCELERATOR, SAFE, Import, Rule, call_arg, code_of, parse_expr, snippet

COPY = Import("copy")
TRACES = frozenset({"torch.jit.trace", "torch.jit.trace_module"})
FAILS = (
    "torch.jit.trace of a model on the XLA device fails at its first convolution on torch_xla 2.9 "
    '("Cannot insert a Tensor that requires grad as a constant"; linear, normalisation, LSTM and '
    f"embedding layers trace; measured on CPU PJRT, {DEFECTS_DOC})"
)


class TracedOnDevice(Rule):
    """TorchScript cannot trace a convolution on the XLA device: trace a CPU copy.

    Measured on torch_xla 2.9.0, CPU PJRT: ``torch.jit.trace`` of a module on the XLA device
    raises ``RuntimeError: Cannot insert a Tensor that requires grad as a constant`` at its
    first ``Conv2d`` (in train and eval mode), while linear, normalisation, LSTM and
    embedding layers trace. TensorBoard's ``SummaryWriter.add_graph(model, input)``, which
    training scripts call once to log the model's graph, traces it that way: the migrated
    script dies there before it trains (tests/test_runtime_defects.py measures it).

    The fix gives ``add_graph`` a CPU copy of the model and of its input
    (``writer.add_graph(copy.deepcopy(model).cpu(), x.cpu())``): the logged graph is the same
    (its device is the CPU), the model that trains is not touched, and the copy costs one
    model's memory on the host, once. A ``torch.jit.trace`` (or ``trace_module``) of the
    script's own is flagged: what it returns runs where it was traced, so the copy is a
    decision for the user (or ``torch.export`` / ``torch.compile`` instead). PyTorch/XLA
    only, as the family.
    """

    CODE = "XLA903"
    NAME = "traced-on-device"
    SUMMARY = "TorchScript tracing of a model on the XLA device fails at a convolution: trace a CPU copy"
    FIX = SAFE
    SEVERITY = "warning"
    TRIGGERS = (r"add_graph(?<!\wadd_graph)\(", r"trace(?<!\wtrace)(?:_module)?\(")  # no leading \b: words()
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    BEFORE = (
        "import copy\n"  # added when missing; shown here so the example is whole
        "writer.add_graph(model, images.to(device))\n"
    )
    AFTER = "import copy\nwriter.add_graph(copy.deepcopy(model).cpu(), images.to(device).cpu())\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) in TRACES:
            self.flag(
                original,
                f"`{snippet(original)}`: {FAILS}; trace a CPU copy (`copy.deepcopy(model).cpu()` with CPU inputs), "
                "or use torch.export / torch.compile",
            )
            return updated
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_graph" and original.args):
            return updated
        model = call_arg(original, 0, "model")
        given = call_arg(original, 1, "input_to_model")
        if model is None or _on_cpu(model.value):
            return updated
        message = (
            f"`{snippet(original)}`: add_graph traces the model with torch.jit.trace, and {FAILS}; "
            "it gets a CPU copy of the model and of its input (the graph logged is the same)"
        )
        moved = {original.args.index(model): True, **({original.args.index(given): False} if given else {})}
        replacement = updated.with_changes(
            args=[
                arg.with_changes(value=_to_cpu(arg.value, copy=moved[i])) if i in moved else arg
                for i, arg in enumerate(updated.args)
            ]
        )
        return self.replace(original, updated, replacement, message, imports=[COPY])


def _on_cpu(node: cst.BaseExpression) -> bool:
    """``x.cpu()``: already moved (this rule's own output, or the user's)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu"


def _to_cpu(node: cst.BaseExpression, copy: bool) -> cst.BaseExpression:
    """The model as a CPU copy, the input on the CPU (each tensor of a literal tuple or list)."""
    if copy:
        return parse_expr(f"copy.deepcopy({code_of(node)}).cpu()")
    if isinstance(node, (cst.Tuple, cst.List)):
        return node.with_changes(elements=[e.with_changes(value=_to_cpu(e.value, False)) for e in node.elements])
    return (
        node
        if _on_cpu(node)
        else parse_expr(f"({code_of(node)}).cpu()" if _needs_parens(node) else f"{code_of(node)}.cpu()")
    )


def _needs_parens(node: cst.BaseExpression) -> bool:
    return not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
