"""XLA670-XLA672 (``--target spmd``): the script runs as one SPMD program (XLA670), each
batch sharded on its batch dimension (XLA671); a launcher or DDP, which SPMD cannot be
mixed with, is flagged (XLA672). See the SPMD user guide (SPMD_DOC)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.sharded_models import shards_its_model
from codemods.shared.spmd_start import at_script_start
from codemods.shared.training_loops import calls_training_step
from codemods.targets.common import (
    LAUNCHERS,
    SPMD_DOC,
    XS,
    TargetRule,
    distributes_itself,
    parse_statement,
)
from migrate_xla.rule.api import SAFE, XR, Rule, code_of


class SpmdMesh(TargetRule):
    """The script runs as one SPMD program: ``xr.use_spmd()`` and a data mesh over every device.

    SPMD user guide (``SPMD_DOC``): ``xr.use_spmd()`` must run before any tensor is put
    on the device, so it goes first in the ``__main__`` block (after the imports instead in
    a flat script, or one whose module-level code puts a model on the device), followed by ``xs.set_global_mesh(xs.get_1d_mesh("data"))``: one mesh
    axis, ``data``, over all ``xr.global_runtime_device_count()`` devices. Parameters
    nobody annotates are replicated, so the model needs nothing; the global batch stays
    the DataLoader's batch size, split across the devices by XLA671.

    PyTorch/XLA only: ``xs.Mesh`` and ``xr.use_spmd()`` are torch_xla's SPMD, and
    ``--runtime torch-tpu`` refuses ``--target spmd``.
    """

    CODE = "XLA670"
    NAME = "spmd-mesh"
    SUMMARY = "xr.use_spmd() and a global device mesh with a 'data' axis at the start of the script"
    FIX = SAFE
    TARGETS = ("spmd",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"__main__|\.backward\(",)
    BEFORE = 'if __name__ == "__main__":\n    main()\n'
    AFTER = (
        'if __name__ == "__main__":\n    xr.use_spmd()\n    xs.set_global_mesh(xs.get_1d_mesh("data"))\n    main()\n'
    )
    SETUP = ("xr.use_spmd()", 'xs.set_global_mesh(xs.get_1d_mesh("data"))')

    def skips(self, module: cst.Module) -> bool:
        # a script that shards its model gets its set-up and its mesh from the sharding family (XLA620, XLA623)
        return super().skips(module) or shards_its_model(self, module)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.skip:
            return updated
        started = at_script_start(original, updated, [parse_statement(code) for code in self.SETUP])
        if started is None:
            return updated  # a library module: the script that imports it sets SPMD up
        module, where = started
        return self.replace(
            where,
            updated,
            module,
            'SPMD: `xr.use_spmd()` and a global mesh over every device (`xs.get_1d_mesh("data")`); '
            "one process drives all devices, the model is replicated",
            imports=[XR, XS],
        )


OWN_MESH = re.compile(r"set_global_mesh\((?!xs\.get_1d_mesh\(\"data\"\)\))")


class SpmdBatchSharding(TargetRule):
    """Each batch is sharded on its batch dimension over the mesh's ``data`` axis.

    SPMD user guide, data parallelism: ``xs.mark_sharding(t, mesh, ("data", None, ...))``
    splits a tensor's first dimension across the devices; XLA's partitioner then runs
    the step data-parallel, with the gradients reduced where the replicated parameters
    meet the sharded batch. The loop XLA302 made iterate ``pl.MpDeviceLoader`` gets one
    ``xs.mark_sharding`` a batch tensor at the top of its body, with a partition spec
    built from the tensor's rank (``("data",) + (None,) * (x.dim() - 1)``), so images,
    tokens and labels all work. A training loop whose batches arrive otherwise (not as
    names of tensors from an MpDeviceLoader) gets a finding: it runs replicated, correct
    but without data parallelism.

    PyTorch/XLA only: ``xs.mark_sharding`` is torch_xla's SPMD, and ``--runtime torch-tpu``
    refuses ``--target spmd``.
    """

    CODE = "XLA671"
    NAME = "spmd-batch-sharding"
    SUMMARY = "the batches of an MpDeviceLoader loop are sharded on their batch dimension (xs.mark_sharding)"
    FIX = SAFE
    TARGETS = ("spmd",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"\.to\(|\.cuda\(|MpDeviceLoader",)
    BEFORE = "for x, y in pl.MpDeviceLoader(loader, device):\n    loss = model(x, y)\n"
    AFTER = (
        "for x, y in pl.MpDeviceLoader(loader, device):\n"
        '    xs.mark_sharding(x, xs.get_global_mesh(), ("data",) + (None,) * (x.dim() - 1))\n'
        '    xs.mark_sharding(y, xs.get_global_mesh(), ("data",) + (None,) * (y.dim() - 1))\n'
        "    loss = model(x, y)\n"
    )

    def skips(self, module: cst.Module) -> bool:
        # a mesh of the script's own (set up by hand, or by the sharding rules from its device mesh
        # or FSDP, XLA620 and XLA623) has no "data" axis: those rules shard its batches over the
        # mesh's axes (XLA624)
        own_mesh = OWN_MESH.search(self.ctx.source) is not None or shards_its_model(self, module)
        return own_mesh or (distributes_itself(self, module) and "use_spmd()" not in self.ctx.source)

    def leave_For(self, original: cst.For, updated: cst.For):
        if self.skip or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        element = self._device_batch(updated.iter, updated.target)
        if element is None:
            if calls_training_step(original.body):
                self.note(
                    original,
                    "SPMD: this training loop's batches are not sharded (they do not come from "
                    "`pl.MpDeviceLoader` as tensors): it runs replicated; shard them with "
                    f'`xs.mark_sharding(x, xs.get_global_mesh(), ("data", None, ...))` ({SPMD_DOC})',
                )
            return updated
        names = [element] if isinstance(element, cst.Name) else [e.value for e in element.elements]
        if not all(isinstance(n, cst.Name) for n in names):
            return updated
        shards = [
            parse_statement(
                f'xs.mark_sharding({n.value}, xs.get_global_mesh(), ("data",) + (None,) * ({n.value}.dim() - 1))'
            )
            for n in names
        ]
        if all(s.deep_equals(b) for s, b in zip(shards, updated.body.body)):
            return updated  # migrated already
        if isinstance(element, cst.Name):
            self.note(
                original,
                f"SPMD: `{element.value}` is taken for one tensor; if the loader yields tuples or "
                "dicts, shard each tensor in it instead",
            )
        replacement = updated.with_changes(body=updated.body.with_changes(body=[*shards, *updated.body.body]))
        return self.replace(
            original,
            updated,
            replacement,
            f"SPMD: {', '.join(f'`{n.value}`' for n in names)} sharded on the batch dimension over the mesh's "
            "`data` axis (`xs.mark_sharding`)",
            imports=[XS],
        )

    def _device_batch(self, iterable: cst.BaseExpression, target: cst.BaseExpression):
        """The target part that binds an MpDeviceLoader's batch (inside enumerate / tqdm), else None."""
        while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args:
            if iterable.func.value == "enumerate":
                if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                    return None
                target = target.elements[1].value
            elif iterable.func.value != "tqdm":
                break
            iterable = iterable.args[0].value
        if not isinstance(iterable, cst.Call):
            return None
        loader = self.qualname(iterable.func) or code_of(iterable.func)
        if loader not in ("torch_xla.distributed.parallel_loader.MpDeviceLoader", "pl.MpDeviceLoader"):
            return None
        if isinstance(target, cst.Name) or (
            isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) for e in target.elements)
        ):
            return target
        return None


class SpmdWithMultiprocessing(Rule):
    """SPMD cannot be mixed with multi-processing: a launcher or DDP in the script is flagged.

    PyTorch/XLA README and overview: "multi-processing is not compatible with SPMD". One
    SPMD process drives every device, so ``mp.spawn`` / ``torch_xla.launch``, process
    groups and ``DistributedDataParallel`` have to go, not be translated: the rule
    reports them and changes nothing (``--target multiprocess`` keeps that form).

    A script that shards its model with FSDP or a device mesh keeps its ``init_process_group``
    and the ``mp.spawn`` of its worker unflagged: the sharding rules make the one the SPMD set-up
    (XLA620), and XLA601 the other one call of the worker.

    PyTorch/XLA only: it guards torch_xla's SPMD form, and ``--runtime torch-tpu`` refuses
    ``--target spmd``.
    """

    CODE = "XLA672"
    NAME = "spmd-with-multiprocessing"
    SUMMARY = "under --target spmd, process launchers, process groups and DDP are flagged (SPMD is one process)"
    FIX = None
    SEVERITY = "error"
    TARGETS = ("spmd",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"spawn|start_processes|launch|init_process_group|DistributedDataParallel",)
    WHOLE_MODULE = True  # as the other target rules: one run of them sees the whole script
    BEFORE = "import torch.multiprocessing as mp\nmp.spawn(train, nprocs=8)\n"
    AFTER = (
        "import torch.multiprocessing as mp\n"
        "# TODO(xla-migrate): XLA672 `torch.multiprocessing.spawn` under `--target spmd`: SPMD runs one process "
        "that drives every device and cannot be mixed with multi-processing; remove the launcher / process group "
        f"/ DDP wrapper and shard the batch instead ({SPMD_DOC}), or migrate with `--target multiprocess`\n"
        "mp.spawn(train, nprocs=8)\n"
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.shards = shards_its_model(self, node)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.shards:
            return (
                updated  # the sharding rules make its process group the SPMD set-up (XLA620), XLA601 its spawn one call
            )
        name = self.qualname(original.func)
        if name in LAUNCHERS:
            self.flag(
                original,
                (
                    f"`{name}` under `--target spmd`: SPMD runs one process that drives every device and cannot be "
                    "mixed with multi-processing; remove the launcher / process group / DDP wrapper and shard the "
                    f"batch instead ({SPMD_DOC}), or migrate with `--target multiprocess`"
                ),
            )
        return updated
