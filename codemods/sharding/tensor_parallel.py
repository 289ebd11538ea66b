"""XLA625: tensor parallelism's ``parallelize_module(module, mesh, plan)`` becomes SPMD marks of
the planned weights (a function written into the file), and a mesh's size and rank the SPMD
program's own."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, ShardingRule, imports_behind
from codemods.shared.definitions import with_definitions
from codemods.shared.sharded_models import INIT_DEVICE_MESH
from migrate_xla.rule import TORCH, XR, call_arg, code_of, parse_expr, string_value, subtree

TP = "torch.distributed.tensor.parallel"
PARALLELIZE = f"{TP}.parallelize_module"
# a style the plan names, as the function written into the file reads it
STYLES = {f"{TP}.ColwiseParallel": '"colwise"', f"{TP}.RowwiseParallel": '"rowwise"'}
HELPER = "xla_parallelize_module"
HELPER_DEF = f'''
def {HELPER}(module, device_mesh=None, parallelize_plan=None, axis=None):
    """torch's parallelize_module in SPMD's form: each submodule the plan names (``*`` matches any
    one name of the path, as in torch) gets its weights annotated with the layout its style gives
    them over the mesh's tensor-parallel axis (``axis``, else the mesh's last): "colwise"
    (ColwiseParallel) splits a Linear's weight by output features and its bias with it (an
    Embedding's weight by columns), "rowwise" (RowwiseParallel) a Linear's weight by input
    features, its bias whole (an Embedding's weight by rows). XLA's partitioner adds the
    collectives the styles make by hand; the forward computes on whole tensors. Written by
    xla-migrate (XLA625)."""
    from fnmatch import fnmatchcase

    mesh = device_mesh or xs.get_global_mesh()
    axis = axis or mesh.axis_names[-1]
    plan = parallelize_plan.items() if isinstance(parallelize_plan, dict) else [("", parallelize_plan)]
    for path, style in plan:
        pattern = path.split(".") if path else []
        for name, sub in module.named_modules():
            parts = name.split(".") if name else []
            if len(parts) != len(pattern) or not all(map(fnmatchcase, parts, pattern)):
                continue
            embedding = isinstance(sub, torch.nn.Embedding)
            if style == "colwise":
                xs.mark_sharding(sub.weight, mesh, (None, axis) if embedding else (axis, None))
                if getattr(sub, "bias", None) is not None:
                    xs.mark_sharding(sub.bias, mesh, (axis,))
            elif style == "rowwise":
                xs.mark_sharding(sub.weight, mesh, (axis, None) if embedding else (None, axis))
    return module
'''
# what a mesh of the script's answers in the one SPMD program, which sees whole tensors
MESH_QUERIES = {"size": "xr.world_size()", "get_local_rank": "xr.global_ordinal()", "get_rank": "xr.global_ordinal()"}


class TensorParallelToMarks(ShardingRule):
    """``parallelize_module(module, mesh, plan)`` with ``ColwiseParallel`` / ``RowwiseParallel``
    styles becomes ``xla_parallelize_module(module, mesh, plan)``, a function written into the file
    that marks the planned weights with their styles' layouts (``xs.mark_sharding``), the styles
    in the plan the names it reads (``"colwise"``, ``"rowwise"``); a mesh's
    ``size()`` becomes ``xr.world_size()`` and its ``get_local_rank()`` / ``get_rank()``
    ``xr.global_ordinal()``.

    torch's styles shard each weight as a DTensor over the tensor-parallel ranks and run the
    forward on each rank's slice, with the collectives the style makes (ColwiseParallel: a
    Linear's weight by output features, RowwiseParallel: by input features, then a sum over the
    ranks). SPMD user guide: one program computes on whole tensors and XLA's partitioner splits
    them as the annotations say, adding the same collectives; an annotation never changes what
    is computed, only where. So the plan keeps its form (a dict built anywhere, wildcard paths)
    and the function reads it at run time (``use_local_output`` goes: every output is whole); the model code written for one rank's slice must see
    the whole tensors: a head count divided by the mesh's size (``n_heads // tp_mesh.size()``,
    PyTorch's tensor-parallel examples) divides by the SPMD program's world size, 1, and a rank
    read from the mesh is 0, as XLA604 makes ``dist.get_rank()``. The mesh is the call's (an
    ``xs.Mesh`` after XLA623), and its axis the mesh's last, torch's place for the
    tensor-parallel one; ``mesh["tp"]`` names it. The parameters must be on the XLA device when
    the function runs. Styles with layouts of their own (``input_layouts``, ``Shard`` /
    ``Replicate``), ``SequenceParallel``, ``PrepareModuleInput`` and ``loss_parallel`` have no
    SPMD form here yet: a file that uses them keeps all of its sharding flagged (XLA608).
    Measured on a small GPT over four CPU devices (tests/test_sharding.py): its losses equal the
    script's at world size 1 in float64.
    """

    CODE = "XLA625"
    NAME = "tensor-parallel-to-marks"
    SUMMARY = (
        "parallelize_module(module, mesh, plan) with Colwise/RowwiseParallel becomes xs.mark_sharding of the planned "
        "weights; a mesh's size and rank are the SPMD program's"
    )
    FIX = "safe"
    BEFORE = (
        "from torch.distributed.device_mesh import init_device_mesh\n"
        "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module\n\n"
        'tp_mesh = init_device_mesh("cuda", (8,), mesh_dim_names=("tp",))\n'
        'parallelize_module(mlp, tp_mesh, {"fc": ColwiseParallel(), "out": RowwiseParallel()})\n'
    )
    AFTER = (
        "from torch.distributed.device_mesh import init_device_mesh\n\n"
        + HELPER_DEF
        + '\n\ntp_mesh = init_device_mesh("cuda", (8,), mesh_dim_names=("tp",))\n'
        f'{HELPER}(mlp, tp_mesh, {{"fc": "colwise", "out": "rowwise"}})\n'
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.meshes: set[str] = set()  # names the file binds to init_device_mesh(...)
        self.defined: set[str] = set()
        self.first_use: cst.CSTNode | None = None  # the top-level statement of the first call written

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.defined = {s.name.value for s in node.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        for n in subtree(node):
            if (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call)
                and self.qualname(n.value.func) in INIT_DEVICE_MESH
            ):
                self.meshes.add(n.targets[0].target.value)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.first_use is None or HELPER in self.defined:
            return updated
        return with_definitions(original, updated, [HELPER_DEF], self.first_use)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.shards and any(self._converts(n) for n in subtree(node) if isinstance(n, cst.Call)):
            self.claim(node)

    def _converts(self, call: cst.Call) -> bool:
        """Whether this rule converts ``call`` or keeps it as the SPMD form reads it (a style)."""
        name = self.qualname(call.func)
        if name in STYLES:
            return all(a.keyword is not None and a.keyword.value == "use_local_output" for a in call.args)
        return name == PARALLELIZE and self._parallelize(call) is not None or self._query(call) is not None

    def _mesh(self, node: cst.BaseExpression) -> tuple[str, str | None] | None:
        """(the mesh's name, the axis named) of ``tp_mesh`` or ``mesh["tp"]``; None for anything else."""
        if isinstance(node, cst.Name) and node.value in self.meshes:
            return node.value, None
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and node.value.value in self.meshes
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and string_value(node.slice[0].slice.value) is not None
        ):
            return node.value.value, code_of(node.slice[0].slice.value)
        return None

    def _parallelize(self, call: cst.Call):
        """(the mesh's name or None, the axis' code or None) of a ``parallelize_module`` call this
        rule converts; None otherwise."""
        if any(a.star for a in call.args) or len(call.args) > 3:
            return None
        if any(a.keyword is not None and a.keyword.value not in ("device_mesh", "parallelize_plan") for a in call.args):
            return None
        mesh = call_arg(call, 1, "device_mesh")
        if mesh is None:
            return None, None
        return self._mesh(mesh.value)

    def _query(self, call: cst.Call) -> str | None:
        """What ``tp_mesh.size()`` (a mesh query without arguments) is in the SPMD program; None otherwise."""
        func = call.func
        if call.args or not isinstance(func, cst.Attribute) or func.attr.value not in MESH_QUERIES:
            return None
        return MESH_QUERIES[func.attr.value] if self._mesh(func.value) is not None else None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.shards:
            return updated
        query = self._query(original)
        if query is not None:
            return self.replace(
                original,
                updated,
                parse_expr(query),
                f"`{code_of(original)}` -> `{query}`: the model code written for one rank's slice computes on whole "
                f"tensors in the one SPMD program, whose world size is 1 and rank 0 ({SPMD_GUIDE})",
                imports=[XR],
            )
        style = STYLES.get(self.qualname(original.func))
        if style is not None and self._converts(original):
            return self.replace(
                original,
                updated,
                parse_expr(style),
                f"`{code_of(original)}` -> `{style}`: the layout `{HELPER}` gives the weights it names "
                "(a style's output is a whole tensor in the SPMD program)",
                drop_if_unused=imports_behind(self, original.func),
            )
        if self.qualname(original.func) != PARALLELIZE:
            return updated
        plan = self._parallelize(original)
        if plan is None:
            return updated
        _, axis = plan
        args = list(updated.args)
        if axis is not None:
            at = next(i for i, a in enumerate(original.args) if a.value is call_arg(original, 1, "device_mesh").value)
            args[at] = args[at].with_changes(value=args[at].value.value)
            tight = cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            )
            args.append(cst.Arg(parse_expr(axis), keyword=cst.Name("axis"), equal=tight))
        replacement = updated.with_changes(func=cst.Name(HELPER), args=args)
        replaced = self.replace(
            original,
            updated,
            replacement,
            f"`{code_of(original.func)}` -> `{HELPER}`, written into this file: the plan's weights sharded as their "
            f"styles lay them out (`xs.mark_sharding` over the mesh's tensor-parallel axis), the forward on whole "
            f"tensors ({SPMD_GUIDE})",
            imports=[XS, TORCH],
            drop_if_unused=imports_behind(self, original.func),
        )
        if replaced is not updated and self.first_use is None and self.ctx.statements:
            self.first_use = self.ctx.statements[0]
        return replaced
