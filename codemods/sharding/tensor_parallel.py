"""XLA625: tensor parallelism's ``parallelize_module(module, mesh, plan)`` becomes SPMD marks of
the planned weights (a function written into the file), and a mesh's size and rank the SPMD
program's own."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import (
    MESH_QUERIES,
    PARALLELIZE,
    SPMD_GUIDE,
    XS,
    ShardingRule,
    imports_behind,
    tuple_code,
)
from codemods.shared.definitions import Written
from codemods.shared.sharded_models import PLACEMENT_MODULES
from migrate_xla.rule.api import TORCH, XR, append_keyword, call_arg, code_of, parse_expr, snippet, subtree

TP = "torch.distributed.tensor.parallel"
# a style the plan names -> its name as the function written into the file reads it
STYLES = {
    f"{TP}.ColwiseParallel": "colwise",
    f"{TP}.RowwiseParallel": "rowwise",
    f"{TP}.SequenceParallel": "sequence",
    f"{TP}.PrepareModuleInput": "input",
    f"{TP}.PrepareModuleOutput": "output",
}
# a style's keywords -> the layouts of its activations they give, or () where SPMD has no use
# for it: where an activation comes from (the module before says it) or a DTensor output (every
# tensor is whole); a keyword not here leaves the style to XLA608
KEYWORDS = {
    "colwise": {"input_layouts": (), "output_layouts": ("output",), "use_local_output": ()},
    "rowwise": {"input_layouts": (), "output_layouts": ("output",), "use_local_output": ()},
    "sequence": {"sequence_dim": ("input", "output"), "use_local_output": ()},
    "input": {
        "input_layouts": (),
        "desired_input_layouts": ("input",),
        "input_kwarg_layouts": (),
        "desired_input_kwarg_layouts": ("input_kwargs",),
        "use_local_output": (),
    },
    "output": {"output_layouts": (), "desired_output_layouts": ("output",), "use_local_output": ()},
}
LOSS_PARALLEL = (f"{TP}.loss_parallel", f"{TP}.loss.loss_parallel")
HELPER = "xla_parallelize_module"
HELPER_DEF = f'''
def {HELPER}(module, device_mesh=None, parallelize_plan=None, axis=None):
    """torch's parallelize_module in SPMD's form: each submodule the plan names (``*`` matches any
    one name of the path, as in torch) gets its weights annotated with the layout its style gives
    them over the mesh's tensor-parallel axis (``axis``, else the mesh's last): "colwise"
    (ColwiseParallel) splits a Linear's weight by output features and its bias with it (an
    Embedding's weight by columns), "rowwise" (RowwiseParallel) a Linear's weight by input
    features, its bias whole (an Embedding's weight by rows); "sequence" (SequenceParallel) keeps
    the weights whole and splits the module's input and output on the sequence dimension, 1;
    "input" and "output" (PrepareModuleInput/Output) annotate activations only. A style written
    as a dict adds the layouts of the module's activations: "input" (its positional inputs),
    "input_kwargs" (its keyword inputs, by name) and "output", each the dimension split over the
    axis or None (whole), one a tensor where a tuple.
    XLA's partitioner adds the collectives the styles make by hand; the forward computes on whole
    tensors. Written by xla-migrate (XLA625)."""
    from fnmatch import fnmatchcase

    mesh = device_mesh or xs.get_global_mesh()
    axis = axis or (mesh.axis_names[-1] if mesh.axis_names else len(mesh.mesh_shape) - 1)

    def shard(param, spec):
        xs.mark_sharding(param, mesh, spec)
        param.xla_partition_spec = spec  # what FSDP2's form adds its axis to

    def mark_keywords(kwargs, dims):
        for name, dim in dims.items():
            if name in kwargs:
                mark(kwargs[name], dim)

    def mark(tensors, dims):
        tensors = tensors if isinstance(tensors, tuple) else (tensors,)
        dims = dims if isinstance(dims, tuple) else (dims,) * len(tensors)
        for tensor, dim in zip(tensors, dims):
            if isinstance(tensor, torch.Tensor):
                spec = [None] * tensor.dim()
                if dim is not None:
                    spec[dim] = axis
                xs.mark_sharding(tensor, mesh, tuple(spec))

    plan = parallelize_plan.items() if isinstance(parallelize_plan, dict) else [("", parallelize_plan)]
    for path, style in plan:
        if isinstance(style, str):
            style = {{"style": style, **({{"input": 1, "output": 1}} if style == "sequence" else {{}})}}
        if not isinstance(style, dict):
            raise TypeError(f"{{style!r}} has no SPMD form here: see the XLA608 note where the plan is written")
        pattern = path.split(".") if path else []
        for name, sub in module.named_modules():
            parts = name.split(".") if name else []
            if len(parts) != len(pattern) or not all(map(fnmatchcase, parts, pattern)):
                continue
            embedding = isinstance(sub, torch.nn.Embedding)
            if style["style"] == "colwise":
                shard(sub.weight, (None, axis) if embedding else (axis, None))
                if getattr(sub, "bias", None) is not None:
                    shard(sub.bias, (axis,))
            elif style["style"] == "rowwise":
                shard(sub.weight, (axis, None) if embedding else (None, axis))
            if "input" in style:
                sub.register_forward_pre_hook(lambda _, args, dims=style["input"]: mark(args, dims))
            if "input_kwargs" in style:
                sub.register_forward_pre_hook(
                    lambda _, args, kwargs, dims=style["input_kwargs"]: mark_keywords(kwargs, dims), with_kwargs=True
                )
            if "output" in style:
                sub.register_forward_hook(lambda _, args, out, dims=style["output"]: mark(out, dims))
    return module
'''


class TensorParallelToMarks(ShardingRule):
    """``parallelize_module(module, mesh, plan)`` becomes ``xla_parallelize_module(module, mesh,
    plan)``, a function written into the file that marks the planned weights and activations
    with their styles' layouts (``xs.mark_sharding``), the styles in the plan the names it reads
    (``"colwise"``, ``"rowwise"``, ``"sequence"``, ``"input"``, ``"output"``, a dict where a
    style sets its activations' layouts); ``with loss_parallel():`` leaves its body; a mesh's
    ``size()`` becomes ``xr.world_size()`` and its ``get_local_rank()`` / ``get_rank()``
    ``xr.global_ordinal()``.

    torch's styles shard each weight as a DTensor over the tensor-parallel ranks and run the
    forward on each rank's slice, with the collectives the style makes (ColwiseParallel: a
    Linear's weight by output features, RowwiseParallel: by input features, then a sum over the
    ranks; SequenceParallel: a norm's activations split on the sequence dimension;
    PrepareModuleInput/Output: activations redistributed). SPMD user guide: one program computes
    on whole tensors and XLA's partitioner splits them as the annotations say, adding the same
    collectives; an annotation never changes what is computed, only where. So the plan keeps its
    form (a dict built anywhere, wildcard paths) and the function reads it at run time: a
    ``Shard(d)`` layout becomes ``d``, ``Replicate()`` None (whole on every device); where an
    activation comes from (``input_layouts`` of Colwise/Rowwise and of PrepareModuleInput's
    layouts before the desired ones) is the module before's annotation, and ``use_local_output``
    goes: every output is whole. ``loss_parallel`` computes the cross entropy of logits split by
    classes as if they were whole: SPMD's logits are. The model code written for one rank's
    slice must see the whole tensors: a head count divided by the mesh's size (``n_heads //
    tp_mesh.size()``, PyTorch's tensor-parallel examples) divides by the SPMD program's world
    size, 1, and a rank read from the mesh is 0, as XLA604 makes ``dist.get_rank()``. The mesh is
    the call's (an ``xs.Mesh`` after XLA623), its axis the mesh's last, torch's place for the
    tensor-parallel one; ``mesh["tp"]``, written out or kept in a name, names it. The parameters
    must be on the XLA device when the function runs. A ``Partial()`` layout is the whole tensor
    (a DTensor's value is its partial values reduced), and PrepareModuleInput's keyword inputs' layouts
    mark those inputs by name. DTensor itself has no SPMD form here: a file that uses DTensor keeps all of its sharding
    flagged (XLA608), and a style left in a plan makes the function raise. Measured on small GPTs
    over four and eight CPU devices (tests/test_sharding.py): their losses equal the script's at
    world size 1 in float64.
    """

    CODE = "XLA625"
    NAME = "tensor-parallel-to-marks"
    SUMMARY = (
        "parallelize_module(module, mesh, plan) becomes xs.mark_sharding of the planned weights and activations, "
        "loss_parallel goes; a mesh's size and rank are the SPMD program's"
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
        self.written = Written(ctx, {HELPER: HELPER_DEF})

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if not self.shards:
            return
        calls = [n for n in subtree(node) if isinstance(n, cst.Call)]
        if any(map(self._converts, calls)) and not any(map(self._left, calls)):
            self.claim(node)

    def visit_With(self, node: cst.With) -> None:
        if self.shards and any(self._loss_parallel(item) for item in node.items):
            self.claim(node)

    def _converts(self, call: cst.Call) -> bool:
        """Whether this rule converts ``call`` or keeps it as the SPMD form reads it (a style, a layout)."""
        name = self.qualname(call.func)
        if name in STYLES:
            return self._style(call) is not None
        if name == PARALLELIZE:
            return self._parallelize(call) is not None
        return self._placement(call) is not None or self._query(call) is not None

    def _left(self, call: cst.Call) -> bool:
        """Whether ``call`` is tensor parallelism's and stays as written (XLA608 flags it)."""
        name = self.qualname(call.func) or ""
        dtensor = name.startswith(("torch.distributed.tensor.", "torch.distributed._tensor."))
        return dtensor and not self._converts(call) and name not in LOSS_PARALLEL

    def _style(self, call: cst.Call) -> str | None:
        """The code of what a style of the plan becomes (``"colwise"``, or ``{"style": "rowwise",
        "output": 1}`` where it sets its activations' layouts); None where it has no SPMD form here."""
        kind = STYLES[self.qualname(call.func)]
        layouts = {}
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value not in KEYWORDS[kind]:
                return None
            keys = KEYWORDS[kind][arg.keyword.value]
            code = code_of(arg.value) if arg.keyword.value == "sequence_dim" else self._layouts(arg.value)
            if keys and code is None:
                return None
            layouts.update(dict.fromkeys(keys, code))
        if not layouts:
            return f'"{kind}"'
        return "{" + ", ".join([f'"style": "{kind}"', *(f'"{k}": {v}' for k, v in layouts.items())]) + "}"

    def _layouts(self, node: cst.BaseExpression) -> str | None:
        """The code of the dimensions a layout (or a tuple of them, or a dict of them by keyword)
        splits: ``Shard(d)`` -> ``d``, ``Replicate()``, ``Partial()`` and None -> ``None``; None where
        another layout is written."""
        if isinstance(node, cst.Dict):
            items = [(e, self._layouts(e.value)) for e in node.elements]
            if any(not isinstance(e, cst.DictElement) or code is None for e, code in items):
                return None
            return "{" + ", ".join(f"{code_of(e.key)}: {code}" for e, code in items) + "}"
        if isinstance(node, (cst.Tuple, cst.List)):
            codes = [self._layouts(e.value) for e in node.elements]
            if None in codes or any(isinstance(e, cst.StarredElement) for e in node.elements):
                return None
            return tuple_code(codes)
        if isinstance(node, cst.Name) and node.value == "None":
            return "None"
        return self._placement(node)

    def _placement(self, node: cst.BaseExpression) -> str | None:
        """``Shard(d)`` -> the code of ``d``, ``Replicate()`` and ``Partial()`` -> ``"None"``; None
        otherwise. A DTensor's value is its partial values reduced: the SPMD program's whole tensor."""
        if not isinstance(node, cst.Call) or any(a.star for a in node.args):
            return None
        module, _, name = (self.qualname(node.func) or "").rpartition(".")
        if module not in PLACEMENT_MODULES:
            return None
        if name == "Partial":
            return "None"
        if any(a.keyword is not None for a in node.args):
            return None
        if name == "Shard" and len(node.args) == 1:
            return code_of(node.args[0].value)
        return "None" if name == "Replicate" and not node.args else None

    def _loss_parallel(self, item: cst.WithItem) -> bool:
        call = item.item
        return (
            isinstance(call, cst.Call)
            and not call.args
            and item.asname is None
            and self.qualname(call.func) in LOSS_PARALLEL
        )

    def _parallelize(self, call: cst.Call):
        """(the mesh's name or None, the axis' code or None) of a ``parallelize_module`` call this
        rule converts; None otherwise."""
        if any(a.star for a in call.args) or len(call.args) > 3:
            return None
        if any(
            a.keyword is not None and a.keyword.value not in ("module", "device_mesh", "parallelize_plan")
            for a in call.args
        ):
            return None
        mesh = call_arg(call, 1, "device_mesh")
        if mesh is None:
            return None, None
        return self.mesh_of(mesh.value)

    def _query(self, call: cst.Call) -> str | None:
        """What ``tp_mesh.size()`` (a mesh query without arguments) is in the SPMD program; None otherwise."""
        func = call.func
        if call.args or not isinstance(func, cst.Attribute) or func.attr.value not in MESH_QUERIES:
            return None
        return MESH_QUERIES[func.attr.value] if self.mesh_of(func.value) is not None else None

    def leave_With(self, original: cst.With, updated: cst.With):
        if not self.shards or not any(self._loss_parallel(item) for item in original.items):
            return updated
        items = [new for old, new in zip(original.items, updated.items) if not self._loss_parallel(old)]
        message = (
            "`loss_parallel()` goes: the cross entropy of logits split by classes is SPMD's cross entropy of the "
            f"whole logits, which the partitioner splits ({SPMD_GUIDE})"
        )
        drops = imports_behind(self, original.items[0].item.func)
        if items:
            items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return self.replace(original, updated, updated.with_changes(items=items), message, drop_if_unused=drops)
        suite = updated.body
        if isinstance(suite, cst.SimpleStatementSuite):  # `with loss_parallel(): loss.backward()`
            body = [cst.SimpleStatementLine(suite.body)]
        else:
            body = list(suite.body)
        comment = suite.header.comment if isinstance(suite, cst.IndentedBlock) else None
        lines = [*updated.leading_lines, *([cst.EmptyLine(comment=comment)] if comment else [])]
        body[0] = body[0].with_changes(leading_lines=[*lines, *body[0].leading_lines])
        return self.replace(original, updated, cst.FlattenSentinel(body), message, drop_if_unused=drops)

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
        name = self.qualname(original.func)
        if name in STYLES:
            style = self._style(original)
            if style is None:
                return updated
            return self.replace(
                original,
                updated,
                parse_expr(style),
                f"`{snippet(original)}` -> `{style}`: the layouts `{HELPER}` gives the weights and activations it "
                "names (a style's output is a whole tensor in the SPMD program)",
                drop_if_unused=imports_behind(self, original),
            )
        if name != PARALLELIZE:
            return updated
        plan = self._parallelize(original)
        if plan is None:
            return updated
        mesh, axis = plan
        replacement = updated.with_changes(func=cst.Name(HELPER))
        if axis is not None:
            at = next(i for i, a in enumerate(original.args) if a is call_arg(original, 1, "device_mesh"))
            args = list(updated.args)
            args[at] = args[at].with_changes(value=cst.Name(mesh))
            replacement = append_keyword(replacement.with_changes(args=args), "axis", parse_expr(axis))
        replaced = self.replace(
            original,
            updated,
            replacement,
            f"`{code_of(original.func)}` -> `{HELPER}`, written into this file: the plan's weights and activations "
            f"sharded as their styles lay them out (`xs.mark_sharding` over the mesh's tensor-parallel axis), the "
            f"forward on whole tensors ({SPMD_GUIDE})",
            imports=[XS, TORCH],
            drop_if_unused=imports_behind(self, original.func),
        )
        if replaced is not updated:
            self.written.use(HELPER)
        return replaced
