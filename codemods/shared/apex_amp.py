"""What XLA408 (amp) does with NVIDIA apex's ``amp``, which XLA807 (cuda_only) would flag.

XLA408 converts ``amp.scale_loss``, ``amp.master_params``, ``amp.state_dict`` /
``amp.load_state_dict`` and ``amp.initialize``, or flags what it cannot convert with a
message of its own; XLA807 flags every other reference to apex. XLA408 puts the ids of the
references it answers for (the called names: ``amp.initialize``) in ``ctx.shared`` under
this key before the traversal reaches them, and XLA807 leaves those alone: one finding a
call."""

from __future__ import annotations

# ctx.shared key: ids of the references to apex.amp that XLA408 converts or flags itself
APEX_AMP_HANDLED = "apex-amp-handled"
