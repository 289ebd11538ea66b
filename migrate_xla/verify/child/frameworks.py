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

Accelerate (1.x; transformers' Trainer prepares its data loaders with it) shuffles in
another order on XLA than on a GPU: ``prepare_data_loader`` gives a shuffling DataLoader's
sampler a new generator seeded from torch's (one draw at ``prepare()``, the user's own
generator replaced), where on a GPU the sampler draws its seed at the start of each epoch,
after the DataLoader's own draw. The same batches in another order would make a right
migration a mismatch from its first step. In the XLA run of one process, a DataLoader
prepared there keeps the generators it had and torch's generator is put back as it was
before the draw, so it shuffles as on the GPU (with several processes Accelerate needs its
shared generator: left alone).

Each patch is applied when its framework's module is first imported (a meta path hook), so
a script that never imports it pays nothing.
"""

from __future__ import annotations

from .shared import _after_import

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


# Accelerate's module defining prepare_data_loader (accelerate.accelerator binds it by name
# when it is imported, after this module has run)
ACCELERATE_DATA_LOADER = ("accelerate.data_loader", "accelerate.accelerator")
ORDER_LABEL = "Accelerate's shuffled batches in the GPU's order"


def _shuffle_as_on_gpu(module, recorder) -> None:
    original = getattr(module, "prepare_data_loader", None)
    if original is None or getattr(original, "_xla_migrate_gpu_order", False):
        return

    def prepare_data_loader(dataloader, *args, **kwargs):
        import torch
        from torch.utils.data import RandomSampler

        sampler = getattr(dataloader, "sampler", None)
        if not isinstance(sampler, RandomSampler):
            return original(dataloader, *args, **kwargs)
        generators = sampler.generator, dataloader.generator
        state = torch.get_rng_state()
        prepared = original(dataloader, *args, **kwargs)
        # the torch DataLoader inside MpDeviceLoaderWrapper and DataLoaderShard
        inner = getattr(prepared, "_loader", prepared)
        inner = getattr(inner, "base_dataloader", inner)
        if sampler.generator is generators[0] or getattr(inner, "batch_sampler", None) is not dataloader.batch_sampler:
            return prepared  # not reseeded, or sharded over several processes
        torch.set_rng_state(state)
        sampler.generator = generators[0]
        inner.generator = generators[1]
        if ORDER_LABEL not in recorder.device:
            recorder.device = f"{recorder.device}; {ORDER_LABEL}" if recorder.device else ORDER_LABEL
        return prepared

    prepare_data_loader._xla_migrate_gpu_order = True
    module.prepare_data_loader = prepare_data_loader


def _install_framework_admission(recorder) -> None:
    """In the XLA run: Accelerate shuffles as on the GPU; on CPU PJRT, Lightning's "tpu"
    accelerator counts PJRT's devices."""
    import os

    _after_import(ACCELERATE_DATA_LOADER, lambda module: _shuffle_as_on_gpu(module, recorder))
    if os.environ.get("PJRT_DEVICE", "CPU") != "CPU":
        return  # on a TPU, Lightning counts the chips itself
    _after_import(LIGHTNING_XLA, lambda module: _admit(module, recorder))
