"""The loss-curve picture of a verify run: both curves above, their difference below."""

from __future__ import annotations

from pathlib import Path

from migrate_xla.verify.compare import Result


def write_plot(result: Result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    ref, mig = result.reference.losses, result.migrated.losses
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    top.plot(range(1, len(ref) + 1), ref, marker="o", label=f"reference: {result.reference.device}")
    top.plot(range(1, len(mig) + 1), mig, marker="x", linestyle="--", label=f"migrated: {result.migrated.device}")
    top.set_ylabel("training loss")
    top.set_title(f"xla-migrate verify: {result.verdict}")
    top.legend()
    steps = min(len(ref), len(mig))
    diffs = [abs(mig[i] - ref[i]) for i in range(steps)]
    bounds = [result.atol + result.rtol * abs(ref[i]) for i in range(steps)]
    bottom.plot(range(1, steps + 1), diffs, marker="o", label="|migrated - reference|")
    bottom.plot(range(1, steps + 1), bounds, linestyle=":", color="grey", label="tolerance")
    if result.first_mismatch:
        bottom.axvline(result.first_mismatch, color="red", linewidth=1, label="first divergence")
    bottom.set_xlabel("step (backward pass)")
    bottom.set_ylabel("difference")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
