"""The hooks that feed the recorder: backward, optimizer and GradScaler steps, autocast, exit and SIGTERM."""

from __future__ import annotations

import atexit
import os
import signal
import sys
from typing import TYPE_CHECKING

import torch
import torch.optim.optimizer as optim_impl

from .shared import _live_optimizers

if TYPE_CHECKING:
    from .recorder import Recorder


def _install_hooks(recorder: Recorder) -> None:
    backward = torch.autograd.backward

    def recording_backward(tensors, *args, **kwargs):
        recorder.on_backward(tensors)
        return backward(tensors, *args, **kwargs)

    torch.autograd.backward = recording_backward

    def after_step(optimizer, args, kwargs):
        _live_optimizers.setdefault(optimizer)
        if not _initialising_state():
            recorder.on_step()

    optim_impl.register_optimizer_step_post_hook(after_step)

    scale = torch.amp.GradScaler.scale

    def recording_scale(self, outputs):
        scaled = scale(self, outputs)
        if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor):
            scaled._xla_migrate_unscaled = outputs
        return scaled

    torch.amp.GradScaler.scale = recording_scale

    scaler_step = torch.amp.GradScaler.step

    def counting_scaler_step(self, optimizer, *args, **kwargs):
        # One step whether or not the scaler skips it (float16 overflow skips early steps).
        recorder.in_scaler_step = True
        try:
            result = scaler_step(self, optimizer, *args, **kwargs)
        finally:
            recorder.in_scaler_step = False
        _live_optimizers.setdefault(optimizer)
        recorder.on_step()
        return result

    torch.amp.GradScaler.step = counting_scaler_step

    autocast_enter = torch.amp.autocast_mode.autocast.__enter__

    def noting_autocast(self):
        if getattr(self, "_enabled", False):
            recorder.precisions.add(str(self.fast_dtype).replace("torch.", ""))
        return autocast_enter(self)

    torch.amp.autocast_mode.autocast.__enter__ = noting_autocast
    atexit.register(recorder.finish, "exit")


def _keep_out_of_graphs(recorder: Recorder) -> None:
    """The recorder's events run eagerly, each time, also where a compiled region calls them
    (a step function compiled whole, its backward and optimizer step in it): Dynamo breaks
    its graph there instead of tracing them into it, once (compiled.py, at the first
    torch.compile that Dynamo runs)."""
    for name in ("on_backward", "on_step"):
        setattr(recorder, name, torch._dynamo.disable(getattr(recorder, name)))


def _write_record_on_sigterm(recorder: Recorder) -> None:
    """The harness's timeout sends SIGTERM first: write what was recorded, then die."""

    def on_sigterm(signum, frame):
        recorder.finish("timeout")
        os._exit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # not the main thread
        pass


def _initialising_state() -> bool:
    """Whether the optimizer step that just ran is torch.distributed.checkpoint's ``_init_optim_state``'s
    (a step at learning rate 0 over zero gradients that makes the state a checkpoint loads into: PyTorch's
    FSDP2 example calls it, and so does ``set_optimizer_state_dict``), not a step of training."""
    frame = sys._getframe(2)
    for _ in range(8):  # the hook, the optimizer's wrappers, their caller
        if frame is None:
            return False
        if frame.f_code.co_name == "_init_optim_state" and frame.f_code.co_filename.endswith("state_dict.py"):
            return True
        frame = frame.f_back
    return False
