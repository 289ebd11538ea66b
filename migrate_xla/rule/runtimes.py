"""What migrated code spells on each runtime (``Settings.runtime``; docs/runtimes.md).

A rule that serves both runtimes writes what it writes through ``self.ctx.api``, the
``Runtime`` of the run: the device, its type, how to count and test devices, the
process-group backend, and the module that mirrors ``torch.cuda``. A rule that only one
runtime needs says so in its ``RUNTIMES`` instead (``torch_xla.sync()`` and
``MpDeviceLoader`` exist because PyTorch/XLA is lazy; TorchTPU is eager).

TorchTPU's facts come from ``tpu_api.py``, generated from its wheel: the device name,
the process-group and torch.compile backends, and ``torch.tpu``'s names (``Runtime.has``).
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate_xla.generated import tpu_api
from migrate_xla.rule.findings import RUNTIMES


@dataclass(frozen=True)
class Import:
    """An import a fix needs: ``import module [as asname]`` or ``from module import obj``."""

    module: str
    obj: str | None = None
    asname: str | None = None


TORCH = Import("torch")
# The torch_xla 2.x public API and aliases the migration guide uses.
TORCH_XLA = Import("torch_xla")
XM = Import("torch_xla.core.xla_model", asname="xm")
XR = Import("torch_xla.runtime", asname="xr")
PL = Import("torch_xla.distributed.parallel_loader", asname="pl")


@dataclass(frozen=True)
class Runtime:
    """How migrated code names a runtime's device and its services."""

    name: str  # the Settings.runtime value: torch-xla, torch-tpu
    title: str  # what the documentation calls it: PyTorch/XLA, TorchTPU
    device_type: str  # torch.device(...).type, the string form of the device, autocast's device_type
    device: str  # an expression for the process's device
    imports: tuple[Import, ...]  # what ``device``, ``device_count`` and ``is_available`` need
    device_count: str  # an expression: how many devices the process sees
    is_available: str  # an expression: whether there is a device
    backend: str  # init_process_group's backend
    compile_backend: str  # torch.compile's backend for the device
    module: str | None  # the module that mirrors torch.cuda (torch.tpu); None: none does
    lazy: bool  # execution is traced and cut into graphs (torch_xla.sync(), MpDeviceLoader)

    def has(self, name: str) -> bool:
        """Whether ``module`` exports ``name`` (``synchronize``, ``Stream``)."""
        return self.module is not None and name in tpu_api.PUBLIC_MODULES.get(self.module, ())

    def mirror(self, cuda_name: str) -> str | None:
        """``torch.cuda.X`` (or ``torch.accelerator.X``) as ``module.X`` where the module has X, else None."""
        last = cuda_name.rpartition(".")[2]
        return f"{self.module}.{last}" if self.has(last) else None


TORCH_XLA_RUNTIME = Runtime(
    name="torch-xla",
    title="PyTorch/XLA",
    device_type="xla",
    device="torch_xla.device()",
    imports=(TORCH_XLA,),
    device_count="torch_xla.device_count()",
    is_available="bool(torch_xla.device_count())",
    backend="xla",
    compile_backend="openxla",
    module=None,
    lazy=True,
)
TORCH_TPU_RUNTIME = Runtime(
    name="torch-tpu",
    title="TorchTPU",
    device_type=tpu_api.DEVICE,
    device=f'torch.device("{tpu_api.DEVICE}")',
    imports=(TORCH,),
    device_count="torch.tpu.device_count()",
    is_available="torch.tpu.is_available()",
    backend=tpu_api.PROCESS_GROUP_BACKENDS[-1],
    compile_backend=tpu_api.COMPILE_BACKEND,
    module="torch.tpu",
    lazy=False,
)
RUNTIME = {runtime.name: runtime for runtime in (TORCH_XLA_RUNTIME, TORCH_TPU_RUNTIME)}
assert tuple(RUNTIME) == RUNTIMES, "findings.RUNTIMES and the runtimes spelled here differ"
