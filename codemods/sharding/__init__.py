"""XLA620-XLA629: sharded training (FSDP, FSDP2, device meshes) in SPMD's form.

A script that already shards its model (it imports ``torch.distributed.fsdp`` or
``torch.distributed.device_mesh``, and joins a process group or builds a mesh, which become
the SPMD set-up) keeps its intent on PyTorch/XLA only as one SPMD program:
``xr.use_spmd()``, a device mesh with named axes, and sharding annotations that XLA's
partitioner turns into the all-gathers and reduce-scatters FSDP makes by hand (the SPMD user
guide, https://docs.pytorch.org/xla/master/perf/spmd_basic.html, and FSDP via SPMD,
https://docs.pytorch.org/xla/master/perf/fsdpv2.html). So these rules act under the default
target and ``--target spmd``; under ``--target multiprocess`` such a script stays flagged
(XLA608). What each form becomes was measured on a small GPT over four CPU devices
(benchmarks/measure_fsdp_spmd.py; docs/decisions.md, "FSDP on SPMD: what we measured"): FSDP
v1 becomes torch_xla's FSDPv2 wrapper (``SpmdFullyShardedDataParallel``), which keeps the wrap
policy's units; FSDP2's ``fully_shard`` becomes ``xs.mark_sharding`` of each parameter's first
dimension over the mesh, FSDP2's own layout (``Shard(0)``); ``init_device_mesh`` becomes an
``xs.Mesh`` with the same axis names over every device the runtime has; the process group goes
(one process drives every device); the batch the training loop moves to the device is sharded
on its first dimension over the mesh, so that each device computes its rows as each GPU did.
Tensor parallelism's ``parallelize_module`` becomes marks of the planned weights and
activations with their styles' layouts (Colwise, Rowwise, Sequence, PrepareModuleInput/Output),
``loss_parallel`` goes, and FSDP2 after it adds its axis to each layout; a distributed
checkpoint saves and loads with torch_xla's SPMD planners. A worker that ``mp.spawn`` starts on
each GPU (PyTorch's FSDP tutorial) is called once (XLA601), and the collectives it runs on its
process group, identities over one process, go. A file that also uses what has no
SPMD form here yet (RPC, pipelines, DTensor itself) keeps all of it flagged (XLA608), never
half-converted, and so does a module that
wraps a model without setting SPMD up. Both forms were exact to float32 and float64 rounding
against the unsharded model, two graphs and no recompilation over six AdamW steps. torch's ``fully_shard``
on an ``"xla"`` DeviceMesh does not run (no process groups), and torch's wrap policies cannot
be handed to FSDPv2 (it calls them with other keywords): torch_xla's are.

PyTorch/XLA only: under ``--runtime torch-tpu`` the scripts keep their torch form (XLA608).
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   setup.py        XLA620 spmd-process-group
#   fsdp.py         XLA621 fsdp-to-fsdpv2
#   fully_shard.py  XLA622 fully-shard-to-marks
#   mesh.py         XLA623 device-mesh-to-xs-mesh
#   batch.py        XLA624 sharded-batch
#   tensor_parallel.py  XLA625 tensor-parallel-to-marks
#   checkpoint.py   XLA626 distributed-checkpoint
#   collectives.py  XLA627 spmd-collectives
#   dtensor_queries.py  XLA628 dtensor-queries
#   common.py       whether a file shards, the guides, the imports the rules add
