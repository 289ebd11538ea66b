"""XLA622: FSDP2's ``fully_shard(module)`` becomes ``xs.mark_sharding`` of the module's parameters."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import FULLY_SHARD, SPMD_GUIDE, XS, StatementRule, imports_behind
from codemods.shared.definitions import Written
from migrate_xla.rule.api import TORCH, call_arg, code_nodes, code_of

# FSDP2's options, which the written function takes, and what each becomes there
OPTIONS = {
    "mp_policy": "a bfloat16 (or float16) `param_dtype` is the module's forward under bfloat16 autocast",
    "reshard_after_forward": "XLA's partitioner decides when a gathered parameter is freed",
    "offload_policy": "the parameters stay in device memory (no host offload): check that the model fits",
}
HELPER = "xla_fully_shard"
# after ``model.to_empty(device=...)``: the parameters it made, marked as fully_shard asked
AGAIN = "xla_fully_shard_again"
HELPER_DEF = f'''
def {HELPER}(module, mesh, axis, mp_policy=None, reshard_after_forward=None, offload_policy=None):
    """FSDP2's fully_shard in SPMD's form: each parameter's first dimension split over ``axis`` of
    ``mesh``, FSDP2's Shard(0), outside the layout tensor parallelism gave it (xla_parallelize_module
    keeps each in ``xla_partition_spec``), as FSDP2 shards a tensor-parallel DTensor. The module
    keeps the call (``xla_fully_sharded``: what FSDP2's FSDPModule says); a parameter on the meta
    device has no memory to mark yet, and is marked once ``to_empty`` has given it some. FSDP2's
    options: an ``mp_policy`` with bfloat16 (or float16) parameters runs the module's forward under
    bfloat16 autocast; XLA decides when a gathered parameter is freed; nothing is offloaded to the
    host. The module's state dict's tensors keep their layouts, as FSDP2's DTensors do. Written by
    xla-migrate (XLA622)."""

    def keep_layouts(module, state_dict, prefix, local_metadata):
        for name, param in module.named_parameters():
            if prefix + name in state_dict and hasattr(param, "xla_partition_spec"):
                state_dict[prefix + name].xla_partition_spec = param.xla_partition_spec

    if not hasattr(module, "xla_fully_sharded"):
        module.register_state_dict_post_hook(keep_layouts)
    module.xla_fully_sharded = (mesh, axis)
    for param in module.parameters():
        spec = getattr(param, "xla_partition_spec", (None,) * param.dim())
        if not spec or axis in (spec[0] if isinstance(spec[0], tuple) else (spec[0],)):
            continue  # a scalar, or split over the axis already (by a call on an inner module)
        spec = (axis if spec[0] is None else (axis, spec[0]),) + spec[1:]
        if not param.is_meta:  # no memory to mark yet: to_empty makes it
            xs.clear_sharding(param)
            xs.mark_sharding(param, mesh, spec)
        param.xla_partition_spec = spec
    if getattr(mp_policy, "param_dtype", None) in (torch.bfloat16, torch.float16):
        module.forward = torch.autocast("xla", dtype=torch.bfloat16)(module.forward)
    return module
'''
AGAIN_DEF = f'''
def {AGAIN}(model):
    """The marks {HELPER} could not make on the meta device, made on the parameters ``to_empty``
    gave ``model`` (FSDP2's initialisation: built on the meta device, sharded, then given memory).
    Written by xla-migrate (XLA622)."""
    for module in model.modules():
        if hasattr(module, "xla_fully_sharded"):
            {HELPER}(module, *module.xla_fully_sharded)
    return model
'''


def _to_empty(call: cst.Call) -> cst.BaseExpression | None:
    """The module of ``module.to_empty(...)``; None for any other call."""
    func = call.func
    return func.value if isinstance(func, cst.Attribute) and func.attr.value == "to_empty" else None


class FullyShardToMarks(StatementRule):
    """``fully_shard(module, mesh=mesh)`` becomes ``xla_fully_shard(module, mesh, axis)``, which marks
    each of the module's parameters sharded on its first dimension over the mesh's last axis.

    FSDP2 lays each parameter out as a DTensor ``Shard(0)`` over its mesh (the last dimension of a
    2-D, hybrid, mesh); SPMD user guide: ``xs.mark_sharding(param, mesh, (axis, None, ...))`` is
    that layout, and XLA's partitioner adds the all-gathers and reduce-scatters FSDP2 makes. The
    call becomes one of ``xla_fully_shard``, a function written into the file that makes those
    marks: a second call on an enclosing module (``fully_shard(block)`` for each block, then
    ``fully_shard(model)``) leaves the blocks' parameters as they are; in a file that lays its
    parameters out with tensor parallelism first (``parallelize_module`` on a "tp" sub-mesh,
    XLA625, then ``fully_shard`` on the "dp" one: PyTorch's 2-D example), where a parameter cannot
    be marked twice ("Existing annotation must be cleared first"), it adds the axis to each
    parameter's first dimension outside its tensor-parallel layout (a column-parallel weight
    ``("tp", None)`` becomes ``(("dp", "tp"), None)``), as FSDP2 shards a DTensor; the module keeps
    the call (``xla_fully_sharded``, which XLA628 reads for FSDP2's ``FSDPModule``) and each
    parameter its layout (``xla_partition_spec``). Measured on a small GPT over four CPU devices
    (docs/decisions.md): the losses of six AdamW steps equal the unsharded model's to float32 and
    float64 rounding, two graphs; torch's own ``fully_shard`` on an ``"xla"`` DeviceMesh does not
    run (the mesh has no process groups). A model built on the meta device (FSDP2's
    initialisation: ``fully_shard``, then ``model.to_empty(device=...)`` and its own init, PyTorch's
    FSDP2 example) has no memory to mark yet: after ``to_empty``, ``xla_fully_shard_again(model)``,
    written into the file too, marks the parameters it made as the calls asked.
    The mesh is the call's ``mesh=`` (an ``xs.Mesh`` after XLA623; a sub-mesh, ``mesh["dp"]``, that
    mesh and its axis), else the global mesh. FSDP2's options are passed on to ``xla_fully_shard``
    as the call wrote them, a ``**kwargs`` of them too (PyTorch's FSDP2 example): an ``mp_policy``
    whose ``param_dtype`` is bfloat16 or float16 runs the module's forward under bfloat16
    autocast, as XLA621 does for FSDP v1's ``MixedPrecision``; ``reshard_after_forward`` and
    ``offload_policy`` are XLA's to decide (no host offload). ``sharded = fully_shard(model)`` binds
    the module itself, as FSDP2 returns it; other keywords, or a call whose value is used otherwise,
    are flagged (XLA608 stays).
    """

    CODE = "XLA622"
    NAME = "fully-shard-to-marks"
    SUMMARY = (
        "FSDP2's fully_shard(module, mesh=...) becomes marks of its parameters on dim 0 over the mesh (xla_fully_shard)"
    )
    FIX = "safe"
    BEFORE = (
        "from torch.distributed import init_process_group\nfrom torch.distributed.fsdp import fully_shard\n\n"
        'init_process_group("nccl")\nfully_shard(model, mesh=mesh)\n'
    )
    AFTER = (
        "from torch.distributed import init_process_group\n\n"
        + HELPER_DEF
        + '\n\ninit_process_group("nccl")\nxla_fully_shard(model, mesh, mesh.axis_names[-1])\n'
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.written = Written(self.ctx, {HELPER: HELPER_DEF, AGAIN: AGAIN_DEF}, {AGAIN: (HELPER,)})
        # FSDP2's initialisation on the meta device: ``model.to_empty(device=...)`` after fully_shard
        calls = [n for n in code_nodes(node) if isinstance(n, cst.Call)] if self.shards else []
        self.materializes = any(_to_empty(call) is not None for call in calls) and any(
            self.qualname(call.func) in FULLY_SHARD for call in calls
        )

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)

    def _uses(self, name: str, original: cst.CSTNode) -> None:
        if self.fixes(original):
            self.written.use(name)

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        if isinstance(plan, str):  # ``model.to_empty(...)``: then the marks its parameters wait for
            self._uses(AGAIN, original)
            again = cst.parse_statement(f"{AGAIN}({plan})")
            return self.replace(
                original,
                updated,
                cst.FlattenSentinel([updated, again]),
                f"`to_empty` gives `{plan}` the memory of the parameters built on the meta device: then "
                f"`{AGAIN}` marks them as `fully_shard` asked ({SPMD_GUIDE})",
                imports=[XS],
            )
        target, module, (mesh, axis), options = plan
        axis = axis or f"{mesh}.axis_names[-1]"
        bound = f"{target} = " if target else ""  # fully_shard returns the module it shards, as the helper does
        # FSDP2's options as the call has them (with the other rules' fixes inside): the helper takes them
        now = dict(zip(map(id, original.body[0].value.args), updated.body[0].value.args))
        written = [code_of(now[id(a)].with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in options]
        call = cst.parse_statement(f"{bound}{HELPER}({', '.join([module, mesh, axis, *written])})")
        self._uses(HELPER, original)
        reasons = "; ".join(
            f"`**{code_of(a.value)}`: FSDP2's options, which it takes as the keywords named here"
            if a.star
            else f"`{a.keyword.value}`: {OPTIONS[a.keyword.value]}"
            for a in options
        )
        return self.replace(
            original,
            updated,
            call.with_changes(leading_lines=updated.leading_lines),
            f"`fully_shard` -> `{HELPER}`, each parameter of `{module}` sharded on its first dimension over the "
            f"mesh (`xs.mark_sharding`), FSDP2's layout ({SPMD_GUIDE})" + (f"; {reasons}" if reasons else ""),
            imports=[XS, TORCH],
            drop_if_unused=imports_behind(self, original),
        )

    def plan(self, statement: cst.SimpleStatementLine):
        """(the name it is assigned to or None, the module's code, (the mesh's code, the axis'),
        the keywords dropped, whether to autocast) for a ``fully_shard(...)`` statement that
        converts whole; the model's code for a ``model.to_empty(...)`` statement whose parameters
        are marked after it; None otherwise."""
        if len(statement.body) != 1:
            return None
        small, target = statement.body[0], None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            target = small.targets[0].target.value  # `sharded = fully_shard(model)`: the module itself
        elif not isinstance(small, cst.Expr):
            return None
        call = small.value
        if self.materializes and target is None and isinstance(call, cst.Call) and _to_empty(call) is not None:
            return code_of(_to_empty(call))
        if not isinstance(call, cst.Call) or self.qualname(call.func) not in FULLY_SHARD:
            return None
        if len([a for a in call.args if a.keyword is None and not a.star]) != 1 or any(
            a.star == "*" or (a.star == "**" and not isinstance(a.value, cst.Name)) for a in call.args
        ):
            return None
        options = [a for a in call.args if a.star or (a.keyword is not None and a.keyword.value != "mesh")]
        if any(a.keyword is not None and a.keyword.value not in OPTIONS for a in options):
            return None  # an option the written function does not take: flagged
        mesh = call_arg(call, None, "mesh")
        if mesh is not None and not isinstance(mesh.value, (cst.Name, cst.Attribute)):
            return None
        module = call.args[0].value
        if mesh is None:
            return target, code_of(module), ("xs.get_global_mesh()", None), options
        return target, code_of(module), self.mesh_of(mesh.value) or (code_of(mesh.value), None), options
