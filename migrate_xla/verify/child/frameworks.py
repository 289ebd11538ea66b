"""Training frameworks that refuse CPU PJRT's device, admitted in the XLA run (verify only).

Lightning (lightning 2.x, ``pytorch_lightning`` and ``lightning_fabric``) counts its "tpu"
accelerator's devices with ``torch_xla._internal.tpu.num_available_devices()``, which is 0
without TPU chips: on CPU PJRT ``Trainer(accelerator="tpu")`` stops with "`XLAAccelerator`
can not run on your system", and ``accelerator="auto"`` trains on the CPU. A migrated
Lightning script is verified through Lightning's own XLA path all the same: in the XLA run
on CPU PJRT, ``XLAAccelerator.auto_device_count`` answers PJRT's device count (so also
``is_available``, which "auto" asks first), as it answers the chips' count on a TPU VM.
Nothing else of Lightning changes: its XLA strategy, precision plugin and
``xm.optimizer_step`` run as on a TPU. The record's device label says so.

The patch is applied when Lightning's module is first imported (a meta path hook), so a
script that never imports Lightning pays nothing.
"""

from __future__ import annotations

import importlib.abc
import sys

# Lightning's XLA accelerator modules, in each of its packages
LIGHTNING_XLA = ("lightning.fabric.accelerators.xla", "lightning_fabric.accelerators.xla")
LABEL = 'Lightning\'s "tpu" accelerator admitted on CPU PJRT'


def _pjrt_count() -> int:
    import torch_xla.runtime as xr

    return xr.global_runtime_device_count()


def _admit(module, recorder) -> None:
    accelerator = getattr(module, "XLAAccelerator", None)
    if accelerator is None:
        return
    accelerator.auto_device_count = staticmethod(_pjrt_count)
    accelerator.is_available = staticmethod(lambda: _pjrt_count() > 0)
    if LABEL not in recorder.device:
        recorder.device = f"{recorder.device}; {LABEL}" if recorder.device else LABEL


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``patch(module)`` right after one of ``names`` is executed, once each."""

    def __init__(self, names, patch) -> None:
        self.names, self.patch, self.busy = set(names), patch, set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            import importlib.util

            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        loader, patch = spec.loader, self.patch

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                patch(module)

        spec.loader = _Loader()
        return spec


def _install_framework_admission(recorder) -> None:
    """In the XLA run on CPU PJRT: Lightning's "tpu" accelerator counts PJRT's devices."""
    import os

    if os.environ.get("PJRT_DEVICE", "CPU") != "CPU":
        return  # on a TPU, Lightning counts the chips itself
    for name in LIGHTNING_XLA:
        if name in sys.modules:
            _admit(sys.modules[name], recorder)
    sys.meta_path.insert(0, _AfterImport(LIGHTNING_XLA, lambda module: _admit(module, recorder)))
