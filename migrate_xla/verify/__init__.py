"""The verification harness: proves the migrated script trains like the original.

The rewriter never imports this package's children; the parent side here imports no
torch either: only the child processes do (see the child package, child/).
"""

from __future__ import annotations

from pathlib import Path

from migrate_xla.verify.compare import Result, table
from migrate_xla.verify.harness import Settings, VerifyError, verify

__all__ = ["Result", "Settings", "VerifyError", "assert_loss_parity", "verify"]


def assert_loss_parity(
    script: str | Path,
    *args: str,
    steps: int = 10,
    migrated: str | Path | None = None,
    project: str | Path | None = None,
    reference_trace: str | Path | None = None,
    max_recompilations: int | None = 0,
    **settings,
) -> Result:
    """For test suites: migrate and verify ``script``; fail with the loss table unless it matches.

    ``script`` is migrated as the CLI would (``[tool.xla-migrate]`` of the nearest
    pyproject.toml) and run with the interpreter running the tests, or ``python=``.
    ``max_recompilations`` (default 0) also fails when XLA compiled new graphs in the
    second half of the steps (the loop never settles); pass None to ignore recompilations. Other keywords are ``Settings``
    fields (``timeout``, ``rtol``, ``target``, ``python``, ...).
    """
    result = verify(
        Path(script),
        list(args),
        Settings(steps=steps, **settings),
        migrated=Path(migrated) if migrated is not None else None,
        project=Path(project) if project is not None else None,
        reference_trace=Path(reference_trace) if reference_trace is not None else None,
    )
    if result.verdict != "match":
        raise AssertionError(f"loss parity failed for {script}\n{table(result)}")
    recompilations = result.migrated.recompilations or 0
    if max_recompilations is not None and recompilations > max_recompilations:
        raise AssertionError(
            f"{recompilations} recompilations in the second half of the steps of {script}\n{table(result)}"
        )
    return result
