"""XLA4xx: mixed precision: CUDA float16 autocast and loss scaling become bfloat16 on XLA.

Follows the migration guide's "Automatic Mixed Precision" section and PyTorch/XLA's AMP
guide (https://docs.pytorch.org/xla/master/perf/amp.html): TPUs compute in bfloat16
natively, and bfloat16 keeps float32's exponent range, so it needs no loss scaling.
Under ``--runtime torch-tpu`` autocast goes to the ``tpu`` device, ``torch.autocast("tpu",
dtype=torch.bfloat16)``, and the GradScaler goes as it does for XLA; the sync-free
optimizers (XLA404) are PyTorch/XLA's only. Autocast prepared with ``functools.partial`` (timm's
``amp_autocast``) migrates as a direct call does, and NVIDIA apex's ``amp`` (``initialize``,
``scale_loss``, ``master_params``, its state in checkpoints) becomes bfloat16 autocast of the
forward pass without loss scaling (XLA408).
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   autocast.py         XLA401 cuda-autocast
#   grad_scaler.py      XLA402 grad-scaler, XLA403 grad-scaler-call, XLA404 syncfree-optimizer
#   float16.py          XLA405 float16-to-bfloat16
#   run_time_dtype.py   XLA406 run-time-amp-dtype
#   library_scaler.py   XLA407 library-loss-scaler
#   apex_amp.py         XLA408 apex-amp
#   apex_plan.py        what XLA408 decides about a file: the apex calls it answers for, the forward passes
#   apex_conversions.py what apex's blocks and calls become without it (XLA408 applies them)
#   scaler_analysis.py  what a file does with its GradScalers (XLA402-XLA404 share it)
#   dtype_choices.py    where an autocast's dtype is chosen (XLA401 and XLA405 share it)
#   common.py           names and helpers the rules share
