"""XLA706: data kept on the device and sliced by the step (``x[step * B:(step + 1) * B]``):
each step traces new constants and compiles a new graph (the migration guide's
"Understanding Recompilations")."""

from __future__ import annotations

import libcst as cst

from codemods.recompilation.common import DYNAMIC_SHAPES_DOC, RECOMPILATION_DOC, RECOMPILES, CompiledOnly
from codemods.shared.device_values import device_tensor_names
from codemods.shared.statements import dotted, names_in
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import ON_ACCELERATOR, TORCH, UNSAFE, Rule, code_nodes, code_of, parse_expr, snippet, words

# A slice whose bound computes with a name: what a batch taken by the step looks like
SLICED = r"\[[^\[\]\n]*(?:[*+][^\[\]\n]*:|:[^\[\]\n]*[*+])[^\[\]\n]*\]"
# or whose bounds are two names (``x[start:end]``, computed from the counter in the loop)
NAMED_BOUNDS = r"\[\s*\w+\s*:\s*\w+\s*\]"


class StepSlicedData(CompiledOnly, Rule):
    """A batch sliced by the step from data kept on the device compiles a graph every step.

    Guide, "Understanding Recompilations": a graph is compiled for each traced program,
    and Python numbers in the program are constants of it. A data set moved to the device
    once (``xtr = torch.from_numpy(xtr).cuda()``) and sliced in the training loop by the
    loop's counter (``xb = xtr[step * B:step * B + B]``) traces a slice with other
    constants every step: a new graph compiles every step, measured on torch_xla 2.9 (CPU
    PJRT). Flagged where the tensor is taken for one on the device (a name assigned a
    ``.cuda()``, ``.to(...)`` or a factory with ``device=``, or an alias of such a name)
    and the bounds read the counter of a loop that trains (it calls ``backward()`` or
    steps an optimizer).

    The unsafe fix indexes with a tensor of positions moved to the device, which is an
    input of the graph, not a constant: ``x.index_select(0, torch.arange(lo, min(hi,
    len(x))).to(x.device))``, the same rows as a copy (a slice is a view: writing into the
    batch no longer writes into the data). Or keep the data on the host and move each
    batch (``x[lo:hi].to(device)``). Both runtimes; under TorchTPU only in a file that calls
    ``torch.compile`` (the family's docstring).
    """

    CODE = "XLA706"
    NAME = "step-sliced-data"
    SUMMARY = "data kept on the device and sliced by the loop's counter compiles a graph every step"
    FIX = UNSAFE
    SEVERITY = "warning"
    TRIGGERS = (SLICED, NAMED_BOUNDS)
    REQUIRES = (ON_ACCELERATOR, words("backward", "step"))  # flagged in a loop that trains
    BEFORE = (
        "x = torch.from_numpy(data).cuda()\n"
        "for step in range(steps):\n"
        "    loss = model(x[step * B:step * B + B]).sum()\n"
        "    loss.backward()\n"
    )
    AFTER = (
        "x = torch.from_numpy(data).cuda()\n"
        "for step in range(steps):\n"
        "    loss = model(x.index_select(0, torch.arange(step * B, min(step * B + B, len(x))).to(x.device))).sum()\n"
        "    loss.backward()\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._on_device: set[str] | None = None  # the names of device tensors, read when first needed
        self.counters: list[
            set[str]
        ] = []  # the names each enclosing loop counts with ({} for a loop that does not train)

    @property
    def on_device(self) -> set[str]:
        if self._on_device is None:  # a walk of the whole file, read for a slice in a loop that trains
            self.ctx.need_whole_module()  # the move to the device may be anywhere in the file
            self._on_device = device_tensor_names(self.module)
        return self._on_device

    def visit_For(self, node: cst.For) -> None:
        if not calls_training_step(node.body):
            self.counters.append(set())
            return
        counters = {n.value for n in code_nodes(node.target) if isinstance(n, cst.Name)}
        # names the body computes from the counter: start = batch; end = start + batch_size
        derived = [
            (target.target.value, names_in(statement.value))
            for statement in code_nodes(node.body)
            if isinstance(statement, cst.Assign)
            for target in statement.targets
            if isinstance(target.target, cst.Name)
        ]
        grown = True
        while grown:
            before = len(counters)
            counters |= {name for name, read in derived if read & counters}
            grown = len(counters) > before
        self.counters.append(counters)

    def leave_For(self, original, updated):
        self.counters.pop()
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        counters = set().union(*self.counters) if self.counters else set()
        if not counters or len(original.slice) != 1 or not isinstance(original.slice[0].slice, cst.Slice):
            return updated
        part = original.slice[0].slice
        name = dotted(original.value)
        if part.step is not None or part.lower is None or part.upper is None or name not in self.on_device:
            return updated
        read = names_in(part.lower) | names_in(part.upper)
        if not read & counters or not self.matters():
            return updated
        lower, upper = code_of(part.lower), code_of(part.upper)
        fixed = f"{name}.index_select(0, torch.arange({lower}, min({upper}, len({name}))).to({name}.device))"
        cost = "compiles a new graph" if self.ctx.api.lazy else RECOMPILES
        message = (
            f"`{snippet(original)}` slices data kept on the device with bounds that change every step "
            f"(`{'`, `'.join(sorted(read & counters))}`): each step traces new constants and {cost}; index it "
            f"with positions moved to the device (`{fixed}`), or keep the data on the host and move each batch; "
            f"see {RECOMPILATION_DOC if self.ctx.api.lazy else DYNAMIC_SHAPES_DOC}"
        )
        if not self.fixes(original):
            self.flag(original, message)
            return updated
        return self.replace(original, updated, parse_expr(fixed), message, imports=[TORCH])
