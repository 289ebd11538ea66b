"""XLA623: ``init_device_mesh("cuda", shape, mesh_dim_names=...)`` becomes an ``xs.Mesh``."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import NP, SPMD_GUIDE, XS, SetupRule, imports_behind, mesh_call
from codemods.shared.sharded_models import INIT_PROCESS_GROUP
from migrate_xla.rule.api import XR, code_of

DEVICES = "xr.global_runtime_device_count()"


class DeviceMeshToXsMesh(SetupRule):
    """``mesh = init_device_mesh("cuda", (n,), mesh_dim_names=("dp",))`` becomes an ``xs.Mesh`` over
    every device with the same axis names, set as the global mesh.

    SPMD user guide, "Mesh": ``xs.Mesh(device_ids, mesh_shape, axis_names)``. The GPU mesh's
    shape counts processes (torchrun's world size); the SPMD mesh's counts the devices one
    process drives, read from the runtime: the first axis takes
    ``xr.global_runtime_device_count()`` divided by the other axes as written (``(dp, tp)`` with
    ``tp`` a number or a name, ``TP`` or ``args.tp``, keeps ``tp`` and gives ``dp`` the rest).
    ``xr.use_spmd()`` goes at the start of the script's run (XLA620's, where the script joins a
    group; before the mesh in a module whose run starts elsewhere), and the mesh becomes the global one (``xs.set_global_mesh``), which torch_xla's sharding helpers and
    FSDPv2 read. A mesh whose later axes are not numbers or names, or for another device type
    than CUDA written out (``"cpu"``) is flagged (XLA608 stays); a device type read at run time
    (``torch.accelerator.current_accelerator().type``, PyTorch's examples) is the accelerator's;
    a mesh without ``mesh_dim_names`` has its axes by position, as torch's has (the written
    functions then name the last axis by its index). An ``xs.Mesh`` has no sub-meshes: a
    sub-mesh kept in a name (``tp_mesh = mesh["tp"]``, PyTorch's 2-D examples) whose every use
    this family converts (the mesh of ``parallelize_module`` or ``fully_shard``, ``size()``,
    ``get_local_rank()``) is removed, and each use names the mesh and the axis (``axis="tp"``).
    Measured (docs/decisions.md): torch's DeviceMesh of device type ``"xla"`` shards through
    DTensor's ``distribute_tensor``, but FSDP2's ``fully_shard`` cannot use it (no process
    groups), so the mesh becomes torch_xla's own.
    """

    CODE = "XLA623"
    NAME = "device-mesh-to-xs-mesh"
    SUMMARY = (
        "init_device_mesh('cuda', shape, mesh_dim_names) becomes an xs.Mesh over every device, the same axis names"
    )
    FIX = "safe"
    BEFORE = (
        "import numpy as np\nfrom torch.distributed.device_mesh import init_device_mesh\n\n"
        'mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))\n'
    )
    AFTER = (
        "import numpy as np\n\n"
        "xr.use_spmd()\n"
        'mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(),), ("dp",))\n'
        "xs.set_global_mesh(mesh)\n"
    )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """A sub-mesh neither passed where it converts (XLA625 names the mesh and the axis there)
        nor kept in a name whose uses do: flagged."""
        if self.shards and id(node) not in self.mesh_arguments and self.mesh_of(node) is not None:
            statement = self.ctx.statements[-1] if self.ctx.statements else None
            if statement is None or self.plan(statement) is None:
                self.flag(
                    node,
                    f"`{code_of(node)}`: an `xs.Mesh` has no sub-meshes; pass the mesh and name the axis "
                    f'(`xla_parallelize_module(module, mesh, plan, axis="tp")`, '
                    f'`xs.mark_sharding(t, mesh, ("dp", None))`), or keep the sub-mesh in a name of its own '
                    f"used only as a mesh argument ({SPMD_GUIDE})",
                )

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        if isinstance(plan, str):  # a sub-mesh kept in a name
            return self.replace(
                original,
                updated,
                cst.RemovalSentinel.REMOVE,
                f"`{plan}` removed: an `xs.Mesh` has no sub-meshes; where the sub-mesh was used, the mesh and "
                f"the axis name are ({SPMD_GUIDE})",
            )
        target, rest, names = plan
        first = DEVICES if not rest else f"{DEVICES} // " + (rest[0] if len(rest) == 1 else f"({' * '.join(rest)})")
        shape = ", ".join([first, *rest]) + ("," if not rest else "")
        lines = [
            f"{target} = xs.Mesh(np.arange({DEVICES}), ({shape}){', ' + names if names else ''})",
            f"xs.set_global_mesh({target})",
        ]
        if INIT_PROCESS_GROUP.rsplit(".", 1)[-1] not in self.ctx.source:  # else XLA620 writes it
            self.started = self.started or self.at_start
            if not self.at_start:
                lines.insert(0, "xr.use_spmd()")
        statements = [cst.parse_statement(code) for code in lines]
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            cst.FlattenSentinel(statements),
            f"the device mesh becomes an `xs.Mesh` over every device with the axes {names or 'by position'}, its shape "
            f"read from the runtime, and the global mesh ({SPMD_GUIDE})",
            imports=[XR, XS, NP],
            drop_if_unused=imports_behind(self, original),
        )

    def plan(self, statement: cst.SimpleStatementLine):
        """(the assigned name, the later axes' sizes, the axis names' code) for
        ``name = init_device_mesh("cuda", shape, mesh_dim_names=names)``; the statement's code for
        a sub-mesh whose every use names its mesh and axis (``tp_mesh = mesh["tp"]``, sharding's
        ``meshes``); None otherwise."""
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
            return None
        assign = statement.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        target = assign.targets[0].target.value
        if self.meshes.get(target, (None, None))[1]:
            return code_of(assign)
        mesh = mesh_call(self, assign.value)
        return None if mesh is None else (target, *mesh)
