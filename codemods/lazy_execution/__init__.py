"""XLA2xx: lazy execution: where the graph of a training step is cut and run.

Follows the migration guide's "Understanding Lazy Execution and Synchronization": on
XLA, operations only build a graph; ``torch_xla.sync()`` compiles and runs it, once per
training iteration, right after the parameters are updated (``optimizer.step()``, or by hand).

These rules leave a CPU-only script (one that picks ``"cpu"`` and names no accelerator:
``rule.ON_ACCELERATOR``) as it is, without a finding: nothing in it runs on an XLA device.

PyTorch/XLA only: TorchTPU (``--runtime torch-tpu``) runs each op eagerly, as CUDA does, so
there is no graph to cut and none of these rules runs there.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   sync_after_step.py    XLA201 sync-after-optimizer-step
#   host_sync.py          XLA202 host-sync-in-training-loop
#   evaluation_loop.py    XLA203 sync-in-evaluation-loop
#   element_wise_read.py  XLA204 element-wise-read
#   element_wise_write.py XLA205 element-wise-write
#   common.py             the sync calls, no-grad contexts and nested scopes the rules share
