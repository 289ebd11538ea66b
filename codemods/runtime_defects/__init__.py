"""XLA9xx: defects of the installed torch_xla that make right code train wrong.

The migration can be right and the losses still drift: an op whose XLA lowering computes
something else than the GPU's, measured by ``xla-migrate verify`` (``--diagnose`` names the
first op whose outputs or gradients differ while its inputs agree). A user cannot find these
alone. Each rule here flags the ops of one measured defect, names the version measured and
offers an opt-in (unsafe) fix that writes the same function in ops XLA gets right. Every
defect has a slow test that measures it in a child process and asserts it is still there
(tests/test_runtime_defects.py), so a torch_xla upgrade shows which are gone, and its row in
docs/runtime_defects.md; the measurements are on CPU PJRT, the only device here, and each
says whether the defect is in the graph torch_xla builds (every device) or in a backend.

PyTorch/XLA only: the defects are torch_xla's; under TorchTPU (``--runtime torch-tpu``) these
rules do not run.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.docs).
# The rules are in the modules of this package (migrate_xla/registry.py finds them):
#   elu_backward.py  XLA901 elu-backward
#   common.py        where the measured defects are written down (docs/runtime_defects.md)
