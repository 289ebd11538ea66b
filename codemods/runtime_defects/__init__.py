"""XLA9xx: defects of the installed torch_xla that make right code train wrong, or not run.

The migration can be right and the losses still drift: an op whose XLA lowering computes
something else than the GPU's, measured by ``xla-migrate verify`` (``--diagnose`` names the
first op whose outputs or gradients differ while its inputs agree). Or the run stops at an
operation torch_xla has no kernel for, not even its CPU fallback: sparse tensors
(``migrate_xla/generated/xla_ops.py``, generated from the installed torch_xla by ``make xla-ops``,
says what each API needs and whether XLA runs it), or TorchScript's tracer, which cannot
trace a convolution on the XLA device, or inference mode, under which a linear layer cannot
run there, or a PackedSequence, on which no RNN runs there, or torch's activation
checkpointing, which asks for a device module torch_xla does not register. A user cannot find these alone. Each rule here flags
the ops of one measured defect, names the version measured and offers a fix that writes the
same function in ops XLA gets right (opt-in, unsafe, where the code changes what it computes
with). Every defect has a
slow test that measures it in a child process and asserts it is still there
(tests/test_runtime_defects.py; the sparse one: tests/test_xla_ops.py), so a torch_xla
upgrade shows which are gone, and its row in docs/runtime_defects.md; the measurements are
on CPU PJRT, the only device here, and each says whether the defect is in the graph
torch_xla builds (every device) or in a backend.

PyTorch/XLA only: the defects are torch_xla's; under TorchTPU (``--runtime torch-tpu``) these
rules do not run.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   elu_backward.py    XLA901 elu-backward
#   sparse_tensors.py  XLA902 sparse-tensors (what XLA can run: migrate_xla/generated/xla_ops.py)
#   traced_on_device.py  XLA903 traced-on-device
#   inference_mode.py  XLA904 inference-mode
#   packed_sequence.py XLA905 packed-sequence
#   activation_checkpoint.py XLA906 activation-checkpoint
#   common.py          where the measured defects are written down (docs/runtime_defects.md)
