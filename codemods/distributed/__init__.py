"""XLA6xx: distributed GPU scripts (mp.spawn, NCCL, DDP, torchrun) in PyTorch/XLA's form.

Follows the migration guide's "Distributed Training" section and PyTorch/XLA's DDP guide
(DDP_GUIDE below): one process per XLA device, started by ``torch_xla.launch``; DDP over
the ``xla`` process group (``init_method="xla://"``), which takes its rank and world size
from the XLA runtime; ranks and sizes read from ``torch_xla.runtime``
(``xr.global_ordinal()``, ``xr.local_ordinal()``, ``xr.world_size()``).

``torch.cuda.set_device(rank)`` is XLA105's (devices): it means nothing on XLA and is
removed. ``torch.cuda.device_count()`` is XLA105's too (``torch_xla.device_count()``),
except where it is the world size: then it is this family's (XLA601 before a launch,
XLA604 elsewhere), because the two differ and because querying devices before
``torch_xla.launch`` starts the runtime in the parent and makes the launch fail
("Runtime is already initialized"). A device count that guards a ``DataParallel`` wrap is
this family's too (XLA610): it becomes ``False``, since DataParallel does not replicate
on XLA. Checked on CPU PJRT at world size 1: the xla group,
DDP, ``dist.all_reduce``, ``xm.rendezvous`` and ``destroy_process_group`` work both under
``torch_xla.launch`` and in one process started with torchrun's variables.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   launch.py               XLA601 mp-spawn
#   process_group.py        XLA602 xla-process-group, XLA603 ddp-xla-form
#   ordinals.py             XLA604 xla-ordinals, XLA605 rank-as-device
#   sampler_collectives.py  XLA606 distributed-sampler-shards, XLA607 xla-collectives
#   no_xla_form.py          XLA608 model-parallelism, XLA609 torchrun-launch-line
#   data_parallel.py        XLA610 data-parallel-guard
#   shared_memory.py        XLA611 shared-memory-training
#   sync_batchnorm.py       XLA613 sync-batchnorm
#   common.py               the guides the messages cite
#   (what a file's mp.spawn calls need, XLA601's and XLA604's: codemods/shared/launch_plan.py)
