"""What the XLA9xx rules share: where the measured defects are written down."""

from __future__ import annotations

DEFECTS_DOC = "xla-migrate's docs/runtime_defects.md"
