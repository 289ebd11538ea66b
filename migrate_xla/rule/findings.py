"""What a run reports, and the words of its contract, without LibCST.

A run whose files wake no rule (pre-commit, mostly) reads its files, matches the rules'
triggers from ``rule_index.py`` and reports, and never imports LibCST or the rules:
what that part of a run shares with the rules lives here (``migrate_xla.rule.api`` gives
the rules the same names). Its types are named tuples and plain classes, not
dataclasses: making a dataclass costs about a millisecond at import, and that part of a
run adds little more than ten to starting Python and click (benchmarks/bench_startup.py).
"""

from __future__ import annotations

from typing import NamedTuple

SAFE = "safe"
UNSAFE = "unsafe"
SEVERITIES = ("error", "warning", "info")
# What the migrated code runs as (docs/design.md, "--target"): one XLA device, one process per
# device launched by torch_xla.launch, or one process driving every device with SPMD.
TARGETS = ("single", "multiprocess", "spmd")
# The runtime the migrated code runs on (docs/runtimes.md): PyTorch/XLA (lazy tensors on the
# "xla" device), the default, or TorchTPU (torch_tpu: eager on the "tpu" device); a rule serves
# the runtimes in its RUNTIMES, as it runs under the targets in its TARGETS.
RUNTIMES = ("torch-xla", "torch-tpu")
# The finding for a notebook cell left as it is: the notebook reader reports it, the rule
# codemods/notebook_cells.py documents it.
CELL_NOT_MIGRATED = "XLA001"
# A suppression comment that silences nothing: the engine reports it, codemods/suppression.py documents it.
UNUSED_SUPPRESSION = "XLA002"
# CUDA code no rule converted (codemods/cuda_only/reference_left.py)
CUDA_REFERENCE_LEFT = "XLA899"
# Framework config files (YAML): migrate_xla/engine/configs.py converts them, codemods/frameworks/
# documents each kind: Accelerate's (accelerate_config.py), Lightning Trainer configs (lightning_config.py)
ACCELERATE_CONFIG = "XLA827"
LIGHTNING_CONFIG = "XLA828"


class RuleError(Exception):
    """A broken rule set (duplicate code, unknown severity, target or runtime) or a selection that names no rule."""


class MigrationError(Exception):
    """A unit of code the engine could not migrate; it is left exactly as it was."""


class Diagnostic(NamedTuple):
    code: str
    message: str
    line: int
    column: int
    severity: str
    fixed: bool
    fix: str | None = None  # what kind of fix the rule offers: "safe", "unsafe" or None
    cell: int | None = None  # notebook cell index, when the file is a notebook
    # covered by a suppression comment (noqa): neither fixed nor reported; --stats counts it
    suppressed: bool = False

    def to_dict(self) -> dict:
        found = self._asdict()
        del found["suppressed"]  # a report shows none
        return found
