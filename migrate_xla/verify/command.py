"""``xla-migrate verify SCRIPT [-- ARGS...]`` and ``xla-migrate tpu-report SCRIPT [-- ARGS...]``:
the click commands of the harness."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from migrate_xla.app.project import migration_options
from migrate_xla.verify.compare import table
from migrate_xla.verify.harness import profile, record_reference, verify
from migrate_xla.verify.settings import PRECISIONS, Settings, VerifyError
from migrate_xla.verify.tpu_chips import DEFAULT_TPU, TPUS
from migrate_xla.verify.tpu_render import render


def tpu_option(command):
    """``--tpu NAME``: the TPU generation the report is for (an unknown name lists the known)."""
    return click.option(
        "--tpu",
        type=click.Choice(sorted(TPUS), case_sensitive=False),
        default=DEFAULT_TPU,
        show_default=True,
        help="The TPU generation the TPU report is for (Google Cloud's published figures: docs/tpu_performance.md).",
    )(command)


@click.command("verify")
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--migrated", type=click.Path(path_type=Path), help="Use this migrated script instead of migrating SCRIPT."
)
@click.option(
    "--project",
    type=click.Path(path_type=Path, file_okay=False),
    help="The project's root, copied for the migrated run with all its modules migrated (default: the nearest folder up from SCRIPT holding .git, pyproject.toml, setup.py, setup.cfg or .project-root, with SCRIPT's folder and what SCRIPT imports migrated; SCRIPT's folder where none does).",
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
@tpu_option
@click.option(
    "--tpu-report/--no-tpu-report",
    default=True,
    show_default=True,
    help="Read one step's graphs of the migrated run for the TPU report (`xla-migrate tpu-report` gives it alone).",
)
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
    tpu,
    tpu_report,
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
    1 mismatch, 2 error, 3 inconclusive (the losses agree, but over too few steps whose
    tolerance could catch a wrong migration).
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
        tpu=tpu.lower(),
        tpu_report=tpu_report,
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


@click.command("tpu-report")
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@tpu_option
@click.option(
    "--migrated", type=click.Path(path_type=Path), help="Use this migrated script instead of migrating SCRIPT."
)
@click.option(
    "--project",
    type=click.Path(path_type=Path, file_okay=False),
    help="The project's root, copied for the migrated run with all its modules migrated (default: the nearest folder up from SCRIPT holding .git, pyproject.toml, setup.py, setup.cfg or .project-root, with SCRIPT's folder and what SCRIPT imports migrated; SCRIPT's folder where none does).",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Stop the run after N optimizer steps; the report reads the last one.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=1), default=900, show_default=True, help="Seconds the run may take."
)
@click.option("--device", help="PJRT_DEVICE of the run (default: $PJRT_DEVICE, else CPU).")
@migration_options
@click.option("--python", "python", metavar="PATH", help="The interpreter that runs it (as for verify).")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False), help="Write the report as JSON.")
def tpu_report_command(script, args, tpu, migrated, project, steps, timeout, device, given, python, json_path):
    """What a TPU would make of SCRIPT's migration: its graphs, read from one step of the migrated
    run on CPU PJRT (as written, not in float64), with the losses not compared.

    Matrix products off the TPU's tiles, float32 ones, the step's FLOPs and bytes and the least
    time they take on --tpu, whether it fits its memory, host transfers and graphs a step, each
    with your file and line (docs/tpu_performance.md). Exit status: 0 when the run reached the
    step the report reads, 2 otherwise.
    """
    settings = Settings(steps=steps, timeout=timeout, device=device, python=python, tpu=tpu.lower(), **given)
    try:
        run, report = profile(script, list(args), settings, migrated=migrated, project=project)
    except VerifyError as exc:
        click.echo(f"tpu-report: error: {exc}", err=True)
        sys.exit(2)
    click.echo("\n".join(render(report)))
    if run.error:
        click.echo(f"tpu-report: the migrated run failed: {run.error}\n{run.stderr_tail}", err=True)
    if json_path is not None:
        migrated_run = {"device": run.device, "steps": run.steps_done, "error": run.error}
        json_path.write_text(json.dumps({"tpu_report": report, "migrated": migrated_run}, indent=2))
    sys.exit(0 if report["available"] else 2)
