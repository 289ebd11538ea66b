"""What the sharding rules share: the base classes (a rule acts only where the file shards its
model: codemods/shared/sharded_models.py), the guides their messages cite, the imports they add,
and how a converted statement keeps XLA608 off it."""

from __future__ import annotations

import libcst as cst

from codemods.shared.sharded_models import INIT_DEVICE_MESH, MAY_SHARD, SPMD_TARGETS, shards_its_model
from codemods.shared.spmd_start import at_script_start, starts_here
from migrate_xla.rule.api import XR, Import, Rule, call_arg, code_nodes, code_of, string_value, subtree, words

SPMD_GUIDE = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"
FSDPV2_GUIDE = "https://docs.pytorch.org/xla/master/perf/fsdpv2.html"
TRIGGER = words("fsdp", "device_mesh", "fully_shard", "init_device_mesh")

XS = Import("torch_xla.distributed.spmd", asname="xs")
NP = Import("numpy", asname="np")
FSDPV2 = Import("torch_xla.experimental.spmd_fully_sharded_data_parallel", "SpmdFullyShardedDataParallel", "FSDPv2")
XLA_WRAP = Import("torch_xla.distributed.fsdp.wrap", asname="xla_wrap")
FUNCTOOLS = Import("functools")

PARALLELIZE = "torch.distributed.tensor.parallel.parallelize_module"
FULLY_SHARD = (
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed.fsdp._fully_shard.fully_shard",
)
# what a mesh of the script's answers in the one SPMD program, which sees whole tensors
MESH_QUERIES = {"size": "xr.world_size()", "get_local_rank": "xr.global_ordinal()", "get_rank": "xr.global_ordinal()"}


class ShardingRule(Rule):
    """A rule of this family: it acts only in a file that shards its model and sets its processes
    up (decided once a file: it imports FSDP, FSDP2 or a device mesh, and calls
    ``init_process_group`` or ``init_device_mesh``, which become the SPMD set-up), and uses no
    parallelism without an SPMD form here (RPC, pipelines, DTensor and the tensor-parallel styles XLA625 does not convert) and
    starts or replicates no processes (``torch_xla.launch``, DDP; an ``mp.spawn`` whose worker XLA601
    can call once is one process), under
    the targets where SPMD is the script's form. A module that only wraps (a trainer library
    whose script joins the group) stays flagged (XLA608): without ``xr.use_spmd()`` FSDPv2 fails."""

    TARGETS = SPMD_TARGETS
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (TRIGGER,)
    REQUIRES = MAY_SHARD  # elsewhere the family does nothing (``shards_its_model``)
    WHOLE_MODULE = True  # what a statement becomes depends on the file's other statements

    def visit_Module(self, node: cst.Module) -> None:
        self.shards = shards_its_model(self, node)
        self.meshes = meshes(self, node) if self.shards else {}
        self.mesh_arguments = self.ctx.shared["mesh arguments"] if self.shards else set()
        self.parallelizes = self.shards and self.ctx.shared["parallelizes"]

    def mesh_of(self, node: cst.BaseExpression) -> tuple[str, str | None] | None:
        """(the mesh's name, the axis' code or None) of a mesh the file passes: a name of
        ``meshes``, or ``mesh["tp"]`` written out; None for anything else."""
        if isinstance(node, cst.Name) and node.value in self.meshes:
            return self.meshes[node.value]
        return _axis_of(node, {k: v for k, v in self.meshes.items() if v[1] is None})

    def claim(self, statement: cst.CSTNode | None) -> None:
        """Keep XLA608's "no XLA form" TODO off a statement this family converts: XLA608 flags
        no statement that holds a TODO entry already, and an empty entry writes no comment."""
        if statement is not None:
            self.ctx.todos.setdefault(id(statement), [])
            self.ctx.held_back.setdefault(id(statement), False)


class StatementRule(ShardingRule):
    """A rule of this family that converts whole statements: ``plan`` says what it makes of one
    (None: not one of its), read from the original; XLA608 is kept off each statement it plans
    for (``claim``), and ``convert`` writes the statement it becomes."""

    def plan(self, statement: cst.SimpleStatementLine):
        raise NotImplementedError

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        raise NotImplementedError

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.shards and self.plan(node) is not None:
            self.claim(node)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        plan = self.plan(original) if self.shards else None
        return updated if plan is None else self.convert(original, updated, plan)


class SetupRule(StatementRule):
    """A rule of this family that writes the SPMD set-up where the script joined its group or built
    its mesh (XLA620, XLA623): ``xr.use_spmd()`` goes at the start of the script's run instead
    (codemods/shared/spmd_start.py), where the script has one; in a module whose run starts
    elsewhere, with the set-up."""

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.at_start = self.shards and starts_here(node)  # xr.use_spmd() at the start of the run
        self.started = False  # a statement converted: leave_Module writes it there

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        started = at_script_start(original, updated, [cst.parse_statement("xr.use_spmd()")]) if self.started else None
        if started is None:
            return updated
        module, where = started
        return self.replace(
            where,
            updated,
            module,
            "`xr.use_spmd()` at the start of the script's run, before anything uses the XLA runtime (a rank or a "
            f"device read before it and the sharded step dies) ({SPMD_GUIDE})",
            imports=[XR],
        )


def imports_behind(rule: Rule, node: cst.CSTNode) -> list[Import]:
    """The imports behind every name in ``node``: what a fix that replaced it may leave unused."""
    return [spec for n in subtree(node) if isinstance(n, cst.Name) for spec in rule.ctx.import_behind(n)]


def meshes(rule: Rule, module: cst.Module) -> dict[str, tuple[str, str | None]]:
    """The names the file binds to device meshes, decided once a file: ``mesh =
    init_device_mesh(...)`` maps to ``("mesh", None)``, and a sub-mesh kept in a name,
    ``tp_mesh = mesh["tp"]``, to ``("mesh", '"tp"')`` (the mesh and its axis' code) where
    every use of the name is one this family converts: the mesh of ``parallelize_module`` or
    ``fully_shard``, or a query of MESH_QUERIES. An ``xs.Mesh`` has no sub-meshes: XLA623
    removes such a binding, and each use names the mesh and the axis. Read in the same walk:
    the meshes passed where this family converts them (``ctx.shared["mesh arguments"]``, their
    ids) and whether the file calls ``parallelize_module`` (``ctx.shared["parallelizes"]``)."""
    ctx = rule.ctx
    if "meshes" not in ctx.shared:
        assigns, names, passed, parallelizes = [], [], [], False
        for node in code_nodes(module):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                assigns.append(node)
            elif isinstance(node, cst.Name):
                names.append(node.value)
            elif isinstance(node, cst.Call):
                parallelizes = parallelizes or ctx.qualname(node.func) == PARALLELIZE
                arg = mesh_arg(ctx, node)
                if arg is not None:
                    passed.append(arg)
        found = {
            a.targets[0].target.value: (a.targets[0].target.value, None)
            for a in assigns
            if mesh_call(rule, a.value) is not None
        }
        subs = {a.targets[0].target.value: _axis_of(a.value, found) for a in assigns}
        subs = {name: axis for name, axis in subs.items() if axis is not None and name not in found}
        bound = [a.targets[0].target.value for a in assigns]
        converted = [m.value for m in passed if isinstance(m, cst.Name)]
        for name, axis in subs.items():
            if bound.count(name) == 1 and names.count(name) == 1 + converted.count(name):
                found[name] = axis
        ctx.shared["meshes"] = found
        ctx.shared["mesh arguments"] = {id(arg) for arg in passed}
        ctx.shared["parallelizes"] = parallelizes
    return ctx.shared["meshes"]


def mesh_call(rule: Rule, call: cst.BaseExpression) -> tuple[list[str], str | None] | None:
    """(the later axes' sizes' code, the axis names' code or None) of ``init_device_mesh(device_type,
    shape, mesh_dim_names=names)`` as XLA623 converts it: the names written out or none, the later axes
    numbers or names (the first takes the devices the others leave), the device type anything
    but another device's name (``"cuda"``, or ``device_type`` read from
    ``torch.accelerator``); None otherwise."""
    if not isinstance(call, cst.Call) or rule.qualname(call.func) not in INIT_DEVICE_MESH:
        return None
    if any(
        a.star or (a.keyword is not None and a.keyword.value not in ("device_type", "mesh_shape", "mesh_dim_names"))
        for a in call.args
    ):
        return None
    device = call_arg(call, 0, "device_type")
    shape = call_arg(call, 1, "mesh_shape")
    names = call_arg(call, None, "mesh_dim_names")
    if device is None or shape is None or string_value(device.value) not in (None, "cuda"):
        return None
    if not isinstance(shape.value, (cst.Tuple, cst.List)):
        return None
    sizes = [e.value for e in shape.value.elements]
    if not all(isinstance(s, (cst.Integer, cst.Name, cst.Attribute)) for s in sizes[1:]):
        return None
    if names is None:  # a mesh whose axes go by position (PyTorch's 1-D tensor-parallel examples)
        return [code_of(s) for s in sizes[1:]], None
    if not isinstance(names.value, (cst.Tuple, cst.List)) or len(sizes) != len(names.value.elements):
        return None
    if any(string_value(e.value) is None for e in names.value.elements):
        return None
    return [code_of(s) for s in sizes[1:]], tuple_code([code_of(e.value) for e in names.value.elements])


def tuple_code(codes: list[str]) -> str:
    """The code of a tuple of the expressions ``codes``: ``("dp",)``, ``(1, None)``."""
    return "(" + ", ".join(codes) + ("," if len(codes) == 1 else "") + ")"


def _axis_of(value: cst.BaseExpression, found: dict) -> tuple[str, str] | None:
    """(the mesh, the axis' code) of ``mesh["tp"]`` with ``mesh`` a whole mesh of ``found``."""
    if (
        isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Name)
        and value.value.value in found
        and len(value.slice) == 1
        and isinstance(value.slice[0].slice, cst.Index)
        and string_value(value.slice[0].slice.value) is not None
    ):
        return value.value.value, code_of(value.slice[0].slice.value)
    return None


def mesh_arg(ctx, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The mesh ``node`` passes where this family converts it (the mesh of ``parallelize_module``
    or ``fully_shard``, the receiver of a mesh query), else None."""
    if not isinstance(node, cst.Call):
        return None
    name = ctx.qualname(node.func)
    arg = call_arg(node, 1, "device_mesh") if name == PARALLELIZE else None
    if name in FULLY_SHARD:
        arg = call_arg(node, None, "mesh")
    if arg is not None:
        return arg.value
    if not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value in MESH_QUERIES:
        return node.func.value
    return None
