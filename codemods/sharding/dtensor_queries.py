"""XLA628: what a script asks FSDP2's modules and DTensor's tensors, in the one SPMD program."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, StatementRule, imports_behind
from codemods.shared.definitions import with_definitions
from codemods.shared.sharded_models import may_shard
from migrate_xla.rule.api import code_of, snippet, words

FSDP_MODULE = (
    "torch.distributed.fsdp.FSDPModule",
    "torch.distributed._composable.fsdp.FSDPModule",
    "torch.distributed.fsdp._fully_shard.FSDPModule",
    "torch.distributed.fsdp._fully_shard._fully_shard.FSDPModule",
)
# FSDP2's module methods that schedule its all-gathers by hand: the partitioner schedules them
SCHEDULING = {
    "unshard": "XLA's partitioner gathers each parameter where the step's graph needs it",
    "reshard": "XLA's partitioner frees a gathered parameter where the step's graph is done with it",
    "set_modules_to_forward_prefetch": "XLA schedules the all-gathers of the step's graph itself",
    "set_modules_to_backward_prefetch": "XLA schedules the all-gathers of the step's graph itself",
}
HELPER = "xla_placements"
HELPER_DEF = f'''
def {HELPER}(tensor):
    """DTensor's placements of a tensor of the SPMD program, read from the layout xla-migrate's
    marks keep (``xla_partition_spec``): for each axis of the global mesh, ``Shard(d)`` where it
    splits dimension ``d``, else ``Replicate()``. Written by xla-migrate (XLA628)."""
    from torch.distributed.tensor import Replicate, Shard

    spec = getattr(tensor, "xla_partition_spec", None) or ()
    mesh = xs.get_global_mesh()
    placements = []
    for axis in mesh.axis_names or range(len(mesh.mesh_shape)):
        split = [d for d, names in enumerate(spec) if axis == names or (isinstance(names, tuple) and axis in names)]
        placements.append(Shard(split[0]) if split else Replicate())
    return tuple(placements)
'''


class DTensorQueries(StatementRule):
    """``isinstance(model, FSDPModule)``, ``param.placements``, ``t.full_tensor()`` and FSDP2's
    hand scheduling (``model.unshard()``) in the SPMD program's terms.

    The SPMD program's parameters are whole tensors with XLA layouts (xla-migrate's marks keep
    each in ``xla_partition_spec``), its modules plain modules that XLA622's ``xla_fully_shard``
    was given (it keeps the call as ``xla_fully_sharded``). So what FSDP2 code asks of them has
    an answer there: ``isinstance(m, FSDPModule)`` becomes ``hasattr(m, "xla_fully_sharded")``;
    ``p.placements`` becomes ``xla_placements(p)``, a function written into the file that reads
    DTensor's placements back from the layout (``(Shard(0),)`` for FSDP2's); ``t.full_tensor()``
    becomes ``t`` (the tensor is whole; XLA gathers it when it is read); ``m.unshard()``,
    ``m.reshard()`` and the prefetch settings go, statements of their own (XLA's partitioner
    schedules the all-gathers). Left as written each raises on a plain tensor or module, as
    PyTorch's FSDP2 example's checks (``inspect_model``) and checkpoints did. Where a script
    joins a group or builds a mesh it acts only when the family converts the script; a module
    that does neither (the example's ``utils.py`` and ``checkpoint.py``, which its script
    imports) is part of the SPMD program its script becomes, under the default target and
    ``--target spmd``. ``t.to_local()`` has no SPMD form (a process holds every shard): XLA608
    stays.
    """

    CODE = "XLA628"
    NAME = "dtensor-queries"
    SUMMARY = "isinstance(m, FSDPModule), p.placements, t.full_tensor() and m.unshard() in the SPMD program's terms"
    FIX = "safe"
    TRIGGERS = (words("FSDPModule", "placements", "full_tensor", *SCHEDULING),)
    REQUIRES = (r"torch\.distributed\.(?:fsdp|_composable|tensor|_tensor)\b",)
    BEFORE = (
        "import torch\nfrom torch.distributed.fsdp import FSDPModule\n\n\n"
        "def inspect(model):\n    assert isinstance(model, FSDPModule)\n    model.unshard()\n"
        "    return {n: p.full_tensor() for n, p in model.named_parameters()}\n"
    )
    AFTER = (
        "import torch\n\n\n"
        "def inspect(model):\n"
        '    assert hasattr(model, "xla_fully_sharded")\n'
        "    return {n: p for n, p in model.named_parameters()}\n"
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        # a module that neither joins a group nor builds a mesh belongs to its script's program
        self.shards = self.shards or not may_shard(self.ctx.source)
        self.first_use: cst.CSTNode | None = None  # the top-level statement of the first xla_placements
        self.defined = {s.name.value for s in node.body if isinstance(s, cst.FunctionDef)}
        self.targets = 0  # inside an assignment's target: an attribute written, not read

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.first_use is None or HELPER in self.defined:
            return updated
        return with_definitions(original, updated, [HELPER_DEF], self.first_use)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets += 1

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget):
        self.targets -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.shards:
            return updated
        func = original.func
        if isinstance(func, cst.Name) and func.value == "isinstance" and len(original.args) == 2:
            kind = original.args[1].value
            if not original.args[1].star and self.qualname(kind) in FSDP_MODULE:
                module = updated.args[0].value
                return self.replace(
                    original,
                    updated,
                    cst.parse_expression(f'hasattr({code_of(module)}, "xla_fully_sharded")'),
                    f"`{snippet(original)}`: in the SPMD program a module FSDP2 shards is one `xla_fully_shard` "
                    f"was given (XLA622), which it keeps as `xla_fully_sharded` ({SPMD_GUIDE})",
                    drop_if_unused=imports_behind(self, kind),
                )
        if isinstance(func, cst.Attribute) and func.attr.value == "full_tensor" and not original.args:
            return self.replace(
                original,
                updated,
                updated.func.value,
                f"`{snippet(original)}`: the SPMD program's tensors are whole (XLA gathers the shards when "
                f"the tensor is read): `.full_tensor()` removed ({SPMD_GUIDE})",
            )
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if not self.shards or self.targets or original.attr.value != "placements":
            return updated
        if self.first_use is None and self.ctx.statements and self.fixes(original):
            self.first_use = self.ctx.statements[0]
        return self.replace(
            original,
            updated,
            cst.parse_expression(f"{HELPER}({code_of(updated.value)})"),
            f"`{snippet(original)}`: DTensor's placements, read back from the layout of the SPMD program's "
            f"tensor by `{HELPER}`, written into this file ({SPMD_GUIDE})",
            imports=[XS],
        )

    def plan(self, statement: cst.SimpleStatementLine) -> str | None:
        """The method of an FSDP2 scheduling call, a statement of its own (``model.unshard()``)."""
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        method = call.func.attr.value
        return method if method in SCHEDULING and (method.startswith("set_") or not call.args) else None

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, method: str):
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            cst.RemovalSentinel.REMOVE,
            f"`{snippet(original.body[0].value)}`: FSDP2's scheduling by hand; {SCHEDULING[method]}: removed "
            f"({SPMD_GUIDE})",
        )
