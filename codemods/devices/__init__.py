"""XLA1xx: every way training code picks and uses a CUDA device, moved to the XLA device.

Follows the migration guide's "Device Handling" section: ``torch.device("cuda:0")``
becomes the XLA device (``torch_xla.device()``, or the string ``"xla"`` where the
code keeps device names as strings), and the ``torch.cuda`` runtime calls become
their torch_xla meaning, or go away where they mean nothing on XLA.

Under ``--runtime torch-tpu`` the device is TorchTPU's: ``torch.device("tpu")``, the
string ``"tpu"``, ``.to("tpu")``, ``t.is_tpu``; the ``torch.cuda`` calls that
``torch.tpu`` mirrors become ``torch.tpu`` calls (``torch.accelerator`` stays: TorchTPU is
its accelerator), and a ``map_location`` that named CUDA restores onto ``"tpu"``.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   cuda_device.py   XLA101 cuda-device, XLA102 cuda-device-string, XLA103 cuda-method
#   device_check.py  XLA104 cuda-device-check
#   runtime.py       XLA105 cuda-runtime-call, XLA106 cuda-memory-query, XLA107 cuda-backend-flag
#   cuda_guards.py   the availability checks that guard CUDA-only code (XLA105 keeps them, XLA106 notes what they guard)
#   map_location.py  XLA108 load-map-location
#   device_context.py XLA112 cuda-device-context
#   weight_norm.py   XLA113 legacy-weight-norm
#   unused_cuda_import.py XLA114 unused-cuda-import
#   swap_params.py   XLA109 swap-module-params
#   legacy_types.py  XLA110 legacy-tensor-type
#   legacy_type_plan.py   what XLA110 decides about a file: each use's factory and device, the flags left off
#   legacy_type_names.py  what XLA110 reads: the legacy types and dtypes, sizes or data, the bindings
#   run_time_device.py  XLA111 run-time-device
