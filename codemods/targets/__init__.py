"""XLA65x-XLA69x: whole-script forms that ``--target multiprocess`` and ``--target spmd`` ask for.

The migration guide's "Distributed Training" section (one process per device, launched by
``torch_xla.launch``, gradients reduced by ``xm.optimizer_step``, each process reading its
own shard through a ``DistributedSampler`` and ``pl.MpDeviceLoader``), and the PyTorch/XLA
SPMD user guide (https://docs.pytorch.org/xla/master/perf/spmd_basic.html: one process
drives every device; ``xr.use_spmd()``, a device mesh, inputs sharded on the batch
dimension, the model replicated). Only the target named on the command line enables these
rules. A script that already distributes itself (``mp.spawn``, DDP, ``torch_xla.launch``)
is left to the XLA6xx distributed rules under ``multiprocess``, and flagged under ``spmd``,
which cannot be mixed with multi-processing. A script that picks the CPU and names no
accelerator (``rule.ON_ACCELERATOR``) runs on the CPU: the whole-script forms
(XLA650-XLA671) leave it as it is.

PyTorch/XLA only: ``--runtime torch-tpu`` refuses ``--target multiprocess`` and ``--target spmd``
(``Settings.checked``), so with TorchTPU these rules never run: a TorchTPU script keeps its own
launcher (``mp.spawn``, torchrun) and DDP over the ``tpu`` process group (the XLA6xx rules).
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   optimizer_step.py       XLA650 xm-optimizer-step (--target multiprocess)
#   distributed_sampler.py  XLA651 distributed-sampler (--target multiprocess)
#   master_only_output.py   XLA652 master-only-output (--target multiprocess)
#   worker.py               XLA659 multiprocess-worker (--target multiprocess)
#   spmd.py                 XLA670 spmd-mesh, XLA671 spmd-batch-sharding, XLA672 spmd-with-multiprocessing (--target spmd)
#   common.py               TargetRule (the base of the whole-script forms), whether a script distributes itself
