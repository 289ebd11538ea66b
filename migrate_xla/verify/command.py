"""``xla-migrate verify SCRIPT [-- ARGS...]``: the click command of the harness."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from migrate_xla.project import migration_options
from migrate_xla.verify.compare import table
from migrate_xla.verify.harness import PRECISIONS, Settings, VerifyError, record_reference, verify


@click.command("verify")
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--migrated", type=click.Path(path_type=Path), help="Use this migrated script instead of migrating SCRIPT."
)
@click.option(
    "--project",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder whose modules are migrated with SCRIPT (default: SCRIPT's folder).",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Stop both runs after N optimizer steps (backward passes where no optimizer steps).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=1), default=900, show_default=True, help="Seconds each run may take."
)
@click.option("--device", help="PJRT_DEVICE of the migrated run (default: $PJRT_DEVICE, else CPU).")
@click.option(
    "--reference",
    "reference_trace",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Compare against a trace saved by --save-reference instead of running the original.",
)
@click.option(
    "--save-reference",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Run only the original and save its losses to this trace.",
)
@click.option("--no-align-rng", is_flag=True, help="Let each run draw its own random numbers.")
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of torch, random and NumPy in both runs (the script's own seeding wins).",
)
@click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="auto",
    show_default=True,
    help="float64: both runs compute in float64 (the exactness check); native: as written; auto: float64 on CPU PJRT.",
)
@click.option(
    "--diagnose",
    is_flag=True,
    help="Also record every parameter and gradient at every step, to name the first that differs.",
)
@click.option(
    "--torchrun/--no-torchrun",
    default=None,
    help="Give both runs a one-process torchrun environment (default: when the script reads RANK etc. without a default).",
)
@click.option("--rtol", type=float, help="Relative tolerance (default by precision).")
@click.option("--atol", type=float, help="Absolute tolerance (default by precision).")
@migration_options
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="The interpreter that runs both (the one you train with; default: the active virtual environment's python, else xla-migrate's own).",
)
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False), help="Write the result as JSON.")
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write both loss curves and their difference as a PNG.",
)
def verify_command(
    script,
    args,
    migrated,
    project,
    steps,
    timeout,
    device,
    reference_trace,
    save_reference,
    no_align_rng,
    seed,
    precision,
    diagnose,
    torchrun,
    rtol,
    atol,
    given,
    python,
    json_path,
    plot_path,
):
    """Run SCRIPT and its migration, compare their training losses step by step.

    Arguments after SCRIPT (use -- before options meant for the script) go to both
    runs. SCRIPT is migrated as the CLI would ([tool.xla-migrate] of the nearest
    pyproject.toml; the migration options given here win: --target multiprocess runs under
    torch_xla.launch, spmd over $CPU_NUM_DEVICES CPU devices; --runtime torch-tpu runs the
    migration eagerly on the CPU with TorchTPU's tpu device emulated). Exit status: 0 match,
    1 mismatch, 2 error.
    """
    if script.suffix == ".ipynb":  # its JSON would run as a Python expression and train nothing
        raise click.UsageError(
            f"verify runs Python scripts, not notebooks: export it with `jupyter nbconvert --to script {script}` "
            "and verify the script"
        )
    settings = Settings(
        steps=steps,
        timeout=timeout,
        device=device,
        align_rng=not no_align_rng,
        seed=seed,
        precision=precision,
        diagnose=diagnose,
        torchrun=torchrun,
        rtol=rtol,
        atol=atol,
        python=python,
        **given,
    )
    try:
        if save_reference is not None:
            run = record_reference(script, list(args), settings, save_reference)
            if run.error:
                click.echo(f"verify: the reference run failed: {run.error}\n{run.stderr_tail}", err=True)
                sys.exit(2)
            python = json.loads(save_reference.read_text())["python"]
            click.echo(
                f"saved {len(run.losses)} reference losses ({run.device}; run by {python['path']}, "
                f"{python['chosen_by']}) to {save_reference}"
            )
            return
        result = verify(
            script, list(args), settings, migrated=migrated, project=project, reference_trace=reference_trace
        )
    except VerifyError as exc:
        click.echo(f"verify: error: {exc}", err=True)
        sys.exit(2)
    click.echo(table(result), nl=False)
    if json_path is not None:
        json_path.write_text(result.to_json())
    if plot_path is not None:
        from migrate_xla.verify.plot import write_plot

        write_plot(result, plot_path)
        click.echo(f"plot: {plot_path}")
    sys.exit(result.exit_code)
