"""XLA622: FSDP2's ``fully_shard(module)`` becomes ``xs.mark_sharding`` of the module's parameters."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, StatementRule, imports_behind
from migrate_xla.rule import TORCH, call_arg, code_of

FULLY_SHARD = (
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed.fsdp._fully_shard.fully_shard",
)
DROPPED = {
    "mp_policy": "bfloat16 compute is `torch.autocast('xla', dtype=torch.bfloat16)` around the module's forward",
    "reshard_after_forward": "XLA's partitioner decides when a gathered parameter is freed",
    "offload_policy": "the parameters stay in device memory (no host offload): check that the model fits",
}


class FullyShardToMarks(StatementRule):
    """``fully_shard(module, mesh=mesh)`` becomes a loop marking each of the module's parameters
    sharded on its first dimension over the mesh's last axis.

    FSDP2 lays each parameter out as a DTensor ``Shard(0)`` over its mesh (the last dimension of a
    2-D, hybrid, mesh); SPMD user guide: ``xs.mark_sharding(param, mesh, (axis, None, ...))`` is
    that layout, and XLA's partitioner adds the all-gathers and reduce-scatters FSDP2 makes. A
    second call on an enclosing module (``fully_shard(block)`` for each block, then
    ``fully_shard(model)``) marks the blocks' parameters again with the same spec, which changes
    nothing. Measured on a small GPT over four CPU devices (docs/decisions.md): the losses of six
    AdamW steps equal the unsharded model's to float32 and float64 rounding, two graphs; torch's
    own ``fully_shard`` on an ``"xla"`` DeviceMesh does not run (the mesh has no process groups).
    The mesh is the call's ``mesh=`` (an ``xs.Mesh`` after XLA623), else the global mesh. The
    parameters must be on the XLA device when the loop runs (a model built on the ``meta``
    device and materialised after ``fully_shard`` must be moved first). ``reshard_after_forward``
    and ``offload_policy`` go, with the reason; ``mp_policy=MixedPrecisionPolicy(param_dtype=
    torch.bfloat16)`` becomes the module's forward under bfloat16 autocast, as XLA621 does for
    FSDP v1's ``MixedPrecision``; other keywords, or a call whose value is used, are flagged
    (XLA608 stays).
    """

    CODE = "XLA622"
    NAME = "fully-shard-to-marks"
    SUMMARY = "FSDP2's fully_shard(module, mesh=...) becomes xs.mark_sharding of its parameters on dim 0 over the mesh"
    FIX = "safe"
    BEFORE = (
        "from torch.distributed import init_process_group\nfrom torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\nfully_shard(model, mesh=mesh)\n'
    )
    AFTER = (
        'from torch.distributed import init_process_group\n\ninit_process_group("nccl")\n'
        "for param in model.parameters():\n"
        "    xs.mark_sharding(param, mesh, (mesh.axis_names[-1],) + (None,) * (param.dim() - 1))\n"
    )

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        module, mesh, dropped, autocast = plan
        loop = cst.parse_statement(
            f"for param in {module}.parameters():\n"
            f"    xs.mark_sharding(param, {mesh}, ({mesh}.axis_names[-1],) + (None,) * (param.dim() - 1))\n"
        )
        loop = loop.with_changes(leading_lines=updated.leading_lines)
        replacement = loop
        if autocast:
            replacement = cst.FlattenSentinel(
                [
                    loop,
                    cst.parse_statement(
                        f'{module}.forward = torch.autocast("xla", dtype=torch.bfloat16)({module}.forward)'
                    ),
                ]
            )
        reasons = "; ".join(f"`{k}` dropped: {DROPPED[k]}" for k in dropped)
        return self.replace(
            original,
            updated,
            replacement,
            f"`fully_shard` -> each parameter of `{module}` sharded on its first dimension over the mesh "
            f"(`xs.mark_sharding`), FSDP2's layout ({SPMD_GUIDE})" + (f"; {reasons}" if reasons else ""),
            imports=[XS, TORCH] if autocast else [XS],
            drop_if_unused=imports_behind(self, original),
        )

    def plan(self, statement: cst.SimpleStatementLine):
        """(the module's code, the mesh's code, the keywords dropped) for a ``fully_shard(...)``
        statement that converts whole; None otherwise."""
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or self.qualname(call.func) not in FULLY_SHARD:
            return None
        if any(a.star for a in call.args) or len([a for a in call.args if a.keyword is None]) != 1:
            return None
        dropped, autocast = [], False
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value == "mesh":
                continue
            if arg.keyword.value == "mp_policy" and self._half(arg.value):
                autocast = True
            elif arg.keyword.value not in DROPPED:
                return None
            dropped.append(arg.keyword.value)
        mesh = call_arg(call, None, "mesh")
        if mesh is not None and not isinstance(mesh.value, (cst.Name, cst.Attribute)):
            return None
        module = call.args[0].value
        if autocast and not isinstance(module, (cst.Name, cst.Attribute)):
            return None
        mesh_code = code_of(mesh.value) if mesh is not None else "xs.get_global_mesh()"
        return code_of(module), mesh_code, dropped, autocast

    def _half(self, value: cst.BaseExpression) -> bool:
        """``MixedPrecisionPolicy(param_dtype=torch.bfloat16)`` (or float16) written in the call."""
        if (
            not isinstance(value, cst.Call)
            or (self.qualname(value.func) or "").rsplit(".", 1)[-1] != "MixedPrecisionPolicy"
        ):
            return False
        dtype = call_arg(value, 0, "param_dtype")
        return dtype is not None and self.qualname(dtype.value) in ("torch.bfloat16", "torch.float16", "torch.half")
