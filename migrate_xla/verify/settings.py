"""What verify is asked to do (Settings, from the command line or ``assert_loss_parity``) and
the error that stops it before anything runs (VerifyError)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from migrate_xla.app.project import MIGRATION_FIELDS
from migrate_xla.rule.findings import RUNTIMES
from migrate_xla.verify import tpu_chips

PRECISIONS = ("auto", "float64", "native")
TORCH_TPU = "torch-tpu"  # the runtime whose migrated run emulates the "tpu" device (child/tpu_emulation.py)
assert TORCH_TPU in RUNTIMES


class VerifyError(Exception):
    """Verification could not start (missing script, unreadable trace, ...)."""


@dataclass
class Settings:
    steps: int = 10
    timeout: float = 600.0
    device: str | None = None  # PJRT_DEVICE of the migrated run; default: the environment's, else CPU
    align_rng: bool = True
    rtol: float | None = None
    atol: float | None = None
    # How the script is migrated, the command line's migration options (migrate_xla/app/project.py);
    # None: as [tool.xla-migrate] of the project's pyproject.toml says (its defaults without one)
    unsafe_fixes: bool | None = None
    target: str | None = None  # single, multiprocess or spmd
    runtime: str | None = None  # torch-xla or torch-tpu (run on the CPU with the "tpu" device emulated)
    select: tuple[str, ...] | None = None  # rule codes or prefixes
    ignore: tuple[str, ...] | None = None
    python: str | None = None  # the children's interpreter; None: $VIRTUAL_ENV's python, else this one
    seed: int = 0  # both runs start from it (torch, random, NumPy); the script's own seeding wins
    precision: str = "auto"  # float64 (the exactness check), native, or auto: float64 on CPU PJRT
    diagnose: bool = False  # record every parameter's and gradient's norm at every step
    torchrun: bool | None = None  # one-process torchrun variables; None: when the script needs them
    tpu: str = tpu_chips.DEFAULT_TPU  # the TPU generation the report is for (tpu_chips.TPUS)
    tpu_report: bool = True  # read one step's graphs of the XLA run for the TPU report (tpu_report.py)

    def migration(self) -> dict[str, object]:
        """The migration settings given (migrate_xla/rule/settings.py's fields), to put in place of the configuration's."""
        return {name: getattr(self, name) for name in MIGRATION_FIELDS if getattr(self, name) is not None}

    def float64(self, env: dict[str, str] | None = None) -> bool:
        if self.precision != "auto":
            return self.precision == "float64"
        if self.runtime == TORCH_TPU:  # emulated on the CPU, as the reference: float64 costs little
            return True
        device = self.device or (env or os.environ).get("PJRT_DEVICE") or "CPU"
        return device.upper() == "CPU"
