"""TorchTPU's "tpu" device and ``torch.tpu`` emulated on the CPU (the migrated run of a
``--runtime torch-tpu`` migration)."""

from __future__ import annotations

import sys
import types

import torch

from .emulation import EmulationMode, _DeviceContext, _DeviceOfContext, _for_user_code, _install_device_shim, _returning

# -- TorchTPU emulated on the CPU (the migrated run of a --runtime torch-tpu migration) -----
#
# torch_tpu renames PyTorch's privateuse1 device to "tpu" and installs ``torch.tpu``, whose
# names are declared in one table (migrate_xla/generated/tpu_api.py, generated from its wheel; the
# harness passes it in the config, as this module imports nothing of xla-migrate). Here
# the same rename makes torch.device("tpu") a device (of type "tpu"), the emulation maps it
# to the CPU as the reference's does CUDA, and ``torch.tpu`` is built from the table: each
# name with its CPU meaning, or, where TorchTPU's meaning cannot be had on the CPU (its eager
# and precision modes, its own kernels and optimizers), raising a clear error when used.
# torch_xla is not importable: it does not exist beside TorchTPU (torch >= 2.11).

TPU_LABEL = "cpu (tpu emulated)"


class _Unemulated:
    """A name of TorchTPU's table that the CPU emulation cannot give a meaning to."""

    def __init__(self, qualname: str) -> None:
        self._qualname = qualname

    def _refuse(self):
        raise NotImplementedError(
            f"{self._qualname} is TorchTPU's own: verify's CPU emulation of the tpu device cannot run it "
            "(its meaning needs TorchTPU on a TPU)"
        )

    def __call__(self, *args, **kwargs):
        self._refuse()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._refuse()

    def __repr__(self) -> str:
        return f"<{self._qualname}: not emulated>"


def _tpu_module(tpu_api: dict) -> types.ModuleType:
    device_type = tpu_api["device"]
    module = types.ModuleType(f"torch.{device_type}")
    module.__doc__ = "TorchTPU's torch.tpu, emulated on the CPU by xla-migrate verify."
    # The device's own generator: seeding it (torch.tpu.manual_seed) leaves the CPU generator,
    # which random numbers drawn "on the device" come from in the emulation, as it is: as
    # torch.cuda.manual_seed leaves it in the reference.
    generator = torch.Generator()
    user_available = _for_user_code(_returning(False), True)
    emulated = {
        "synchronize": _returning(None),
        "device": _DeviceContext,
        "device_of": _DeviceOfContext,
        "device_count": _for_user_code(_returning(0), 1),
        "current_device": _returning(0),
        "set_device": _returning(None),
        "is_available": user_available,
        "is_initialized": _returning(True),
        "get_device_name": _returning(TPU_LABEL),
        "get_device_properties": _returning(types.SimpleNamespace(name=TPU_LABEL, total_memory=0, type=device_type)),
        "manual_seed": lambda seed: generator.manual_seed(int(seed)) and None,
        "manual_seed_all": lambda seed: generator.manual_seed(int(seed)) and None,
        "initial_seed": lambda: generator.initial_seed(),
        "get_rng_state": lambda device=None: generator.get_state(),
        "set_rng_state": lambda state, device=None: generator.set_state(state),
        "default_generators": (generator,),
        "get_amp_supported_dtype": lambda: [torch.bfloat16, torch.float16],
        # the chips' addresses and topology for the workers a launcher starts: none on the CPU,
        # where the workers meet through MASTER_ADDR / MASTER_PORT (gloo)
        "distributed.set_tpu_launch_env": _returning(None),
    }
    # what torch.manual_seed looks for to seed a privateuse1 device as well (torch_tpu has it)
    module._is_in_bad_fork = _returning(False)
    public = tpu_api["public_modules"]
    for name in sorted(public.get(module.__name__, ())):
        setattr(module, name, emulated.get(name, _Unemulated(f"{module.__name__}.{name}")))
    for qualname, exported in sorted(public.items()):
        parent, _, last = qualname.rpartition(".")
        if parent != module.__name__:
            continue
        sub = types.ModuleType(qualname)
        for name in sorted(exported):
            setattr(sub, name, emulated.get(f"{last}.{name}", _Unemulated(f"{qualname}.{name}")))
        setattr(module, last, sub)
        sys.modules[qualname] = sub
    return module


def _install_tpu_shim(tpu_api: dict) -> None:
    """``tpu_api``: migrate_xla/generated/tpu_api.py's facts, as the harness passes them (children.tpu_facts):
    the device name, the process-group and compile backends, the public modules and their names."""
    device_type = tpu_api["device"]
    sys.modules["torch_xla"] = None  # import torch_xla: ModuleNotFoundError, as beside TorchTPU
    torch.utils.rename_privateuse1_backend(device_type)  # torch.device("tpu"), as torch_tpu does
    module = _tpu_module(tpu_api)
    torch._register_device_module(device_type, module)  # torch.tpu, sys.modules["torch.tpu"]
    # torch's internals that pick a device for their own tensors (a barrier's) ask the C++
    # accelerator, which the renamed device has none of (no PrivateUse1 hooks): the CPU it is
    torch._C._get_accelerator = _returning(torch.device("cpu"))
    _install_device_shim(device_type, module, tuple(tpu_api["process_group_backends"]))
    # torch_tpu's generated methods: Tensor.tpu(), Module.tpu() (by the shim), Tensor.is_tpu
    torch.Tensor.is_tpu = property(lambda self: True)  # every tensor is on the one emulated device
    torch.nn.utils.rnn.PackedSequence.tpu = lambda self, *args, **kwargs: self
    # torch.compile(backend="tpu") runs the model eagerly: compiled.py


class TpuEmulationMode(EmulationMode):
    """The migrated run of a TorchTPU migration: the "tpu" device mapped to the CPU."""

    device_type = "tpu"
