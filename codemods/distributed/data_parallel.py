"""XLA610: a device count that guards a DataParallel wrap stays off on XLA (and on TorchTPU)."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from codemods.shared.launch_plan import DEVICE_COUNT
from migrate_xla.rule.api import (
    SAFE,
    FileContext,
    Rule,
    children,
    code_nodes,
    code_of,
    find,
    names_trigger,
    subtree,
    words,
)

DATA_PARALLEL = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.data_parallel.data_parallel",
    }
)
# What counts devices: CUDA's, the accelerator's, and XLA's (what XLA105 makes of them)
COUNTS = DEVICE_COUNT | {"torch_xla.device_count"}
_STORES = (cst.Assign, cst.AnnAssign)


def _why(test: str, wrap: str, runtime: str = "torch-xla") -> str:
    if runtime != "torch-xla":
        return (
            f"`{test}` guards `{wrap}`, which replicates over CUDA devices only (a TorchTPU process is bound to one "
            "device, and `torch.tpu.set_device` refuses another): the check is now `False`; to train on several "
            'TPU chips, run one process per chip (`mp.spawn` or torchrun) with DDP over the `"tpu"` process group'
        )
    return (
        f"`{test}` guards `{wrap}`, which replicates over CUDA devices only (on XLA it wraps the model "
        "without replicating it, `device_ids=[]`, and adds `module.` to its state_dict keys): the check is now "
        "`False`; to train on several XLA devices, run one process per device (`--target multiprocess`: "
        f"`torch_xla.launch` and DDP, {DDP_GUIDE}) or use SPMD (`--target spmd`)"
    )


class DataParallelGuard(Rule):
    """A device count that guards a DataParallel wrap becomes ``False``, so the wrap stays off.

    ``if torch.cuda.device_count() > 1: model = nn.DataParallel(model)`` (or ``n_gpu > 1``
    with ``n_gpu = torch.cuda.device_count()``) wraps the model on a multi-GPU machine.
    ``DataParallel`` replicates over CUDA devices only: on a host with several XLA devices
    ``torch_xla.device_count() > 1`` (what XLA105 makes of the count) would wrap the model
    without replicating it (``device_ids=[]``: it runs on one device) and give its
    ``state_dict`` keys a ``module.`` prefix. So, as with the other checks that guard what
    only CUDA has (XLA104), the check stays off: each comparison on a device count in the
    test of an ``if`` (or of ``a if c else b``) whose branch wraps the model in
    ``nn.DataParallel`` / ``torch.nn.parallel.DataParallel`` / ``data_parallel`` becomes
    ``False``, and the ``if`` gets a TODO: data parallelism on XLA is one process per
    device (``--target multiprocess``, ``torch_xla.launch`` and DDP; PyTorch/XLA's DDP
    guide) or SPMD (``--target spmd``). A count is a ``device_count()`` call, or a name or
    attribute the file assigns one (``n_gpu``, ``args.n_gpu``); a wrap on the user's own
    flag (``args.ngpu > 1``) is the user's choice and stays.

    Both runtimes: ``DataParallel`` cannot replicate over TorchTPU's devices either, since a
    TorchTPU process is bound to one device (``torch.tpu.set_device`` refuses another index)
    and the copies it would make between devices are CUDA's; the TODO then points to one
    process per chip and DDP over the ``tpu`` process group.
    """

    CODE = "XLA610"
    NAME = "data-parallel-guard"
    SUMMARY = "a device count that guards nn.DataParallel becomes False: DataParallel does not replicate on XLA"
    FIX = SAFE
    SEVERITY = "warning"  # what stays: data parallelism, for a person to set up the XLA way
    TRIGGERS = (names_trigger(*DATA_PARALLEL),)
    REQUIRES = (words("device_count"),)
    CONTEXT = REQUIRES  # the assignments of the counts a guard reads
    BEFORE = "if torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\n"
    AFTER = f"# TODO(xla-migrate): XLA610 {_why('torch.cuda.device_count() > 1', 'torch.nn.DataParallel')}\n" + (
        "if False:\n    model = torch.nn.DataParallel(model)\n"
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.module: cst.Module | None = None
        self.counted: set[str] | None = None  # the names and attributes the file assigns a count
        self.guards: set[int] = set()  # the comparisons (or bare counts) that become False

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def _is_count_call(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.qualname(node.func) in COUNTS

    def _names_count(self, node: cst.CSTNode) -> bool:
        if self._is_count_call(node):
            return True
        if not isinstance(node, (cst.Name, cst.Attribute)) or self.module is None:
            return False
        if self.counted is None:
            self.counted = {
                code_of(target)
                for store in code_nodes(self.module)
                if isinstance(store, _STORES) and store.value is not None and find(store.value, self._is_count_call)
                for target in ([t.target for t in store.targets] if isinstance(store, cst.Assign) else [store.target])
                if isinstance(target, (cst.Name, cst.Attribute))
            }
        return code_of(node) in self.counted

    def _counts_in(self, test: cst.CSTNode) -> list[cst.CSTNode]:
        """The comparisons on a device count in ``test`` (``n_gpu > 1``), and the counts used bare."""
        if isinstance(test, cst.Comparison):
            operands = [test.left, *(c.comparator for c in test.comparisons)]
            return [test] if any(map(self._names_count, operands)) else []
        if self._names_count(test):
            return [test]
        return [found for child in children(test) for found in self._counts_in(child)]

    def _guard(self, node: cst.If | cst.IfExp) -> None:
        wrap = find(node.body, lambda n: isinstance(n, cst.Call) and self.qualname(n.func) in DATA_PARALLEL)
        if wrap is None:
            return
        counts = self._counts_in(node.test)
        if not counts:
            return
        self.guards.update(map(id, counts))
        self.flag(node, _why(code_of(node.test), code_of(wrap.func), self.ctx.runtime))

    def visit_If(self, node: cst.If) -> None:
        self._guard(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guard(node)

    def _off(self, original: cst.CSTNode, updated: cst.CSTNode):
        if id(original) not in self.guards:
            return updated
        if self.fixes(original):
            self.ctx.forget_fixes_inside(original)  # XLA105's torch_xla.device_count() goes with it
        calls = [n for n in subtree(original) if self._is_count_call(n)]
        return self.replace(
            original,
            updated,
            cst.Name("False", lpar=updated.lpar, rpar=updated.rpar),
            f"`{code_of(original)}` -> `False`: it guards DataParallel, which does not replicate on "
            + ("XLA" if self.ctx.runtime == "torch-xla" else self.ctx.api.title),
            drop_if_unused=[spec for call in calls for spec in self.ctx.import_behind(call.func)],
        )

    leave_Comparison = leave_Call = leave_Name = leave_Attribute = _off
