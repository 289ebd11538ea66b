"""Whether a script shards its model the way the sharding rules (codemods/sharding/) convert it:
it imports FSDP, FSDP2, tensor parallelism's plan and styles or a device mesh, calls
``init_process_group`` or ``init_device_mesh``, uses no parallelism without an SPMD form here
and starts no processes of its own but an ``mp.spawn`` whose worker can be called once. Decided once a
file. Shared by the sharding family (it acts only there) and the ``--target spmd`` rules (XLA672
leaves the process group that family converts)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.launch_plan import SPAWN, launch_plan
from migrate_xla.rule.api import Rule, code_nodes, dotted_name, words

# The targets under which a file that shards its model becomes one SPMD program (under
# multiprocess, one process a device, its sharding stays flagged)
SPMD_TARGETS = ("single", "spmd")
# The modules whose use makes a file one that shards its model
SHARDING_MODULES = (
    "torch.distributed.fsdp",
    "torch.distributed._composable.fsdp",
    "torch.distributed.device_mesh",
    "torch.distributed.tensor.parallel",
)
# Where DTensor's layouts (Shard, Replicate) are imported from
PLACEMENT_MODULES = (
    "torch.distributed.tensor",
    "torch.distributed._tensor",
    "torch.distributed.tensor.placement_types",
    "torch.distributed._tensor.placement_types",
)
# Tensor parallelism's names that have an SPMD form (codemods/sharding/tensor_parallel.py): the
# plan, its styles and layouts, loss_parallel; the rest of torch.distributed.tensor (DTensor) has
# none here yet
TENSOR_PARALLEL = (
    *(
        f"torch.distributed.tensor.parallel.{name}"
        for name in (
            "parallelize_module",
            "ColwiseParallel",
            "RowwiseParallel",
            "SequenceParallel",
            "PrepareModuleInput",
            "PrepareModuleOutput",
            "loss_parallel",
        )
    ),
    *(f"{module}.{name}" for module in PLACEMENT_MODULES for name in ("Shard", "Replicate", "Partial")),
)
# Parallelism without an SPMD form here yet: a file that uses one keeps all its sharding flagged
# (XLA608), never half-converted
UNCONVERTED = (
    "torch.distributed.rpc",
    "torch.distributed.pipelining",
    "torch.distributed.pipeline",
    "torch.distributed.tensor",
    "torch.distributed._tensor",
)
# Processes started or replicated by the script: one SPMD program cannot be part of them. A worker
# mp.spawn starts (PyTorch's FSDP tutorial) is one where the launch can call it once instead
# (launch_plan's ``once``; XLA601 then does)
MULTIPROCESS = (
    "torch.multiprocessing.start_processes",
    "torch_xla.launch",
    "torch_xla.distributed.xla_multiprocessing.spawn",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
DESTROY_PROCESS_GROUP = "torch.distributed.destroy_process_group"
INIT_DEVICE_MESH = (
    "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.init_device_mesh",
    "torch.distributed._tensor.device_mesh.init_device_mesh",
)


def shards_its_model(rule: Rule, module: cst.Module) -> bool:
    """Whether ``module`` shards its model (the module docstring), decided once a file; the file's
    imports are learned on the way."""
    ctx = rule.ctx
    if "shards its model" not in ctx.shared and not may_shard(ctx.source):
        ctx.shared["shards its model"] = False  # no walk
    if "shards its model" not in ctx.shared:
        names, calls = [], []
        for statement in code_nodes(module):
            if isinstance(statement, (cst.Import, cst.ImportFrom)):
                ctx.learn_import(statement)
                names += _imported(statement)
            elif isinstance(statement, cst.Call):
                calls.append(statement.func)
        ctx.shared["shards its model"] = (
            any(name.startswith(SHARDING_MODULES) or name in INIT_DEVICE_MESH for name in names)
            and not any(
                name.startswith(UNCONVERTED) and name not in TENSOR_PARALLEL and name not in INIT_DEVICE_MESH
                for name in names
            )
            and not any(ctx.qualname(func) in MULTIPROCESS for func in calls)
            and (not any(ctx.qualname(func) in SPAWN for func in calls) or launch_plan(ctx, module).once)
        )
    return ctx.shared["shards its model"]


# What the text of a file that shards its model spells (``may_shard``): an import of a sharding
# module names ``fsdp``, ``device_mesh`` or (tensor parallelism) the word ``parallel``; it joins a
# group or builds a mesh. The sharding family's REQUIRES: a file without them wakes none of its rules.
MAY_SHARD = ("fsdp|device_mesh|" + words("parallel"), "init_process_group|init_device_mesh")


def may_shard(source: str) -> bool:
    """What the text tells of ``shards_its_model``: False where it imports no sharding, or neither
    joins a group nor builds a mesh."""
    return all(re.search(pattern, source) for pattern in MAY_SHARD)


def _imported(statement: cst.Import | cst.ImportFrom) -> list[str]:
    """The qualified names an import statement binds."""
    if isinstance(statement.names, cst.ImportStar):
        return [dotted_name(statement.module)] if statement.module is not None else []
    if isinstance(statement, cst.Import):
        return [dotted_name(alias.name) for alias in statement.names]
    module = dotted_name(statement.module) if statement.module is not None else ""
    return [f"{module}.{dotted_name(alias.name)}" for alias in statement.names]
