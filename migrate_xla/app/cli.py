"""The command line: options in, engine and report out (docs/design.md, "CLI contract").

Exit codes: 0 nothing to change and no error-level finding; 1 files changed (or
would change, with --diff / --check) or an error-level finding remains; 2 a usage
error, or a file that could not be read, decoded, parsed or written; 130 interrupted
(Ctrl-C: each file is written whole or left as it was).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import click

from migrate_xla.app import report
from migrate_xla.app.project import Project, SettingsError, configure, migration_options, split
from migrate_xla.app.run import FileResult, MigrationError, migrate_code, relocate
from migrate_xla.engine import registry
from migrate_xla.rule.settings import Settings
from migrate_xla.sources.discovery import Found
from migrate_xla.sources.reading import decode
from migrate_xla.sources.source import Source, SourceError
from migrate_xla.sources.writing import write_back, write_copy

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a process that Ctrl-C stopped


# Subcommands imported when named: `verify` pulls in the harness (15 ms), which a
# pre-commit run of `--check` does not need. It imports no torch either: only the
# harness's child processes do.
LAZY_COMMANDS = {
    "verify": ("migrate_xla.verify.command", "verify_command"),
    "tpu-report": ("migrate_xla.verify.command", "tpu_report_command"),
}


class MigrateByDefault(click.Group):
    """``xla-migrate PATH...`` runs the ``migrate`` command; other words name subcommands.

    Its help lists the ``migrate`` command's options, the everyday ones, above the
    subcommands; a bare ``xla-migrate`` prints that help and exits 0 (pre-commit calls a
    hook so when no staged file matches and the hook is set to ``always_run``).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS and name not in self.commands:
            module, attribute = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if (
            args
            and args[0] not in self.commands
            and args[0] not in LAZY_COMMANDS
            and args[0] not in ("--help", "-h", "--version")
        ):
            args = ["migrate", *args]
        elif not args:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(EXIT_CLEAN)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # click would say "Aborted!" and exit 1, the code for "files changed"
            click.echo("\nxla-migrate: interrupted; each file is written whole or left as it was", err=True)
            ctx.exit(EXIT_INTERRUPTED)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] PATH...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        params = [*self.commands["migrate"].params, *self.get_params(ctx)]
        rows = [row for param in params if isinstance(param, click.Option) and (row := param.get_help_record(ctx))]
        with formatter.section("Options"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)


@click.group(cls=MigrateByDefault, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="xla-migrate")
def main() -> None:
    """Migrate PyTorch training code from CUDA GPUs to PyTorch/XLA.

    \b
    xla-migrate [OPTIONS] PATH...    rewrite the .py, .ipynb and Accelerate config files in place (- reads stdin)
    xla-migrate --diff PATH...       show what would change, write nothing
    xla-migrate --check PATH...      list findings (path:line:col: CODE message), write nothing
    xla-migrate verify SCRIPT        run SCRIPT and its migration, compare the losses
    xla-migrate tpu-report SCRIPT    what a TPU would make of the migration's graphs
    xla-migrate rules                list the rules
    xla-migrate explain CODE         what a rule does and why

    Settings not given here come from [tool.xla-migrate] in the nearest pyproject.toml.
    Exit codes: 0 nothing to change, 1 files changed or a finding needs a person,
    2 usage error or a file that could not be read, parsed or written, 130 interrupted.
    """


def _colour(stream) -> bool:
    """Colour on a terminal; never with NO_COLOR set (no-color.org), always with FORCE_COLOR."""
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or stream.isatty()


def _missing(path: Path) -> bool:
    """No such file: a path that is there but cannot be looked at is not missing (reading it says why)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, allow_dash=True, readable=False))
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Print findings (path:line:col: CODE message); write nothing.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write migrated copies under DIR, mirroring the tree.",
)
@migration_options
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option(
    "--exclude",
    "--extend-exclude",
    "exclude",
    multiple=True,
    metavar="PATTERNS",
    help="Also skip these paths while walking folders (.gitignore syntax, comma-separated), beyond the configured exclude.",
)
@click.option("--stats", is_flag=True, help="Print counts per rule and per file (text and json formats).")
@click.option("-q", "--quiet", is_flag=True, help="Print only findings and errors: no summary line, no progress bar.")
@click.option(
    "--exit-zero", is_flag=True, help="Exit 0 even when files changed or findings remain (2 still means failure)."
)
def migrate(paths, diff, check, output, given, jobs, fmt, exclude, stats, quiet, exit_zero):
    """Rewrite the .py and .ipynb files and Accelerate's config YAML under PATHS (folders walked
    honouring .gitignore; - reads stdin).

    Settings not given here come from [tool.xla-migrate] in the nearest pyproject.toml.
    """
    if sum(map(bool, (diff, check, output))) > 1:
        raise click.UsageError("--diff, --check and --output exclude each other")
    if stats and fmt in ("sarif", "github"):  # as ruff's --statistics: no place for counts in these formats
        raise click.UsageError(f"--stats works with --format text or json, not {fmt}")
    if not paths:  # what pre-commit runs when no staged file matches (always_run: true)
        if not quiet:
            click.echo("xla-migrate: no paths given, nothing to do (xla-migrate --help shows how to use it)", err=True)
        sys.exit(EXIT_CLEAN)
    mode = "diff" if diff else "check" if check else "output" if output else "write"
    try:
        settings = configure(paths, **given, extend_exclude=split(exclude), fixpoint=mode != "check")
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from None
    if any(str(p) == "-" for p in paths):
        if len(paths) > 1:
            raise click.UsageError("- (stdin) cannot be combined with other paths")
        if output:
            raise click.UsageError("- (stdin) writes to stdout; --output does not apply")
        code = _migrate_stdin(settings, mode, fmt, stats, quiet)
        sys.exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)
    missing = [str(p) for p in paths if _missing(p)]
    if missing:
        raise click.UsageError(f"no such file or directory: {', '.join(missing)}")

    project = Project(paths, settings)
    if output:
        project.files = _outside_output(project.files, output)
    results = []
    stream = project.migrate(jobs)
    count = len(project.unreadable) + len(project.files)
    show_progress = len(project.files) > 1 and sys.stderr.isatty() and fmt == "text" and not quiet
    with (
        click.progressbar(stream, length=count, label="Migrating", file=sys.stderr)
        if show_progress
        else _nullbar(stream) as bar
    ):
        for result in bar:
            _write(result, mode, output)
            results.append(result)
    if mode == "diff":
        for result in results:
            if result.changed:
                click.echo(report.unified_diff(result), nl=False)
    code = _report(results, mode, fmt, stats, quiet, findings_to_stdout=mode != "diff")
    sys.exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)


class _nullbar:
    def __init__(self, iterable):
        self.iterable = iterable

    def __enter__(self):
        return self.iterable

    def __exit__(self, *exc):
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _output_path(found: Found, output: Path) -> Path:
    """Where ``-o DIR`` puts the copy of ``found``: its path under its argument, under DIR.

    Paths are made absolute without following links: a link named explicitly may
    point anywhere, and its copy still goes next to where the link is.
    """
    return output / Path(os.path.abspath(found.path)).relative_to(os.path.abspath(found.root))


def _outside_output(files: list[Found], output: Path) -> list[Found]:
    """The inputs for ``-o DIR``: not DIR's own files, and none that a copy would overwrite.

    A folder argument that holds DIR is not walked into DIR (its files are earlier
    copies). Two inputs landing on one output file (``-o out a/ b/``, both with x.py),
    or an output file that is an input, is a usage error before anything is written.
    """
    files = [f for f in files if _inside(f.root, output) or not _inside(f.path, output)]
    inputs = {f.path.resolve(): f.path for f in files}
    claimed: dict[Path, Path] = {}
    for found in files:
        target = _output_path(found, output)
        key = target.resolve()
        if key in inputs:
            raise click.UsageError(f"--output would overwrite the input {inputs[key]}; choose another folder")
        if key in claimed:
            raise click.UsageError(
                f"{claimed[key]} and {found.path} would both be written to {target}; pass their common folder instead"
            )
        claimed[key] = found.path
    return files


def _write(result: FileResult, mode: str, output: Path | None) -> None:
    """Write one result as the mode asks; a failed write becomes the file's error."""
    if result.error is not None or result.source is None:
        return
    try:
        if mode == "write" and result.changed:
            write_back(result.source, result.new_text)
        elif mode == "output":
            write_copy(_output_path(result.found, output), result.source, result.new_text)
        else:
            return
        result.diagnostics = relocate(result.diagnostics, result.source, result.new_text)
    except SourceError as exc:
        result.error = str(exc)
        result.new_text = None  # not written: not counted as changed


def _report(results: list[FileResult], mode: str, fmt: str, stats: bool, quiet: bool, findings_to_stdout: bool) -> int:
    """Print findings in ``fmt`` (to stdout unless it carries code or a diff); return the exit code.

    Text is coloured on a terminal (``_colour``); ``quiet`` leaves out the closing line.
    """
    out = sys.stdout if findings_to_stdout else sys.stderr
    summary = report.Summary.of(results)
    show_fixed = mode in ("check", "diff")
    if fmt == "json":
        click.echo(report.json_report(results, summary, stats), file=out)
    elif fmt == "sarif":
        click.echo(report.sarif_report(results, show_fixed), file=out)
    elif fmt == "github":
        for line in report.github_lines(results, show_fixed):
            click.echo(line, file=out)
    else:
        colour, err_colour = _colour(out), _colour(sys.stderr)
        for line in report.text_findings(results, show_fixed, colour):
            click.echo(line, file=out, color=colour)
        for line in report.error_lines(results, err_colour):
            click.echo(line, err=True, color=err_colour)
        if stats:
            for line in report.text_stats(results, summary):
                click.echo(line, file=out)
        if not quiet and (len(results) != 1 or summary.changed or summary.remaining or summary.errors):
            click.echo(report.closing_line(summary, mode), err=True)
    return _exit_code(summary)


def _exit_code(summary: report.Summary) -> int:
    if summary.errors:
        return EXIT_ERROR
    if summary.changed or summary.remaining_errors:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _migrate_stdin(settings: Settings, mode: str, fmt: str, stats: bool, quiet: bool) -> int:
    """``-``: code in on stdin; out on stdout the migrated code (or the diff); findings on stderr."""
    data = sys.stdin.buffer.read()
    result = FileResult(path="-")
    try:
        text, encoding = decode(data)
    except SourceError as exc:
        result.error = str(exc)
    else:
        result.source = Source(Path("-"), text, encoding, 0o644, 0)
        try:
            result.take(*migrate_code(text, settings, "<stdin>"))
        except MigrationError as exc:
            result.error = str(exc)
    if result.error is not None:
        if mode == "write":
            sys.stdout.buffer.write(data)  # a filter gives back what it cannot migrate, unchanged
    elif mode == "diff":
        click.echo(report.unified_diff(result) if result.changed else "", nl=False)
    elif mode == "write":
        sys.stdout.buffer.write(result.source.encode(result.new_text))
    sys.stdout.flush()
    return _report([result], mode, fmt, stats, quiet, findings_to_stdout=mode == "check")


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, name, fix safety, severity and summary."""
    for line in report.rules_table():
        click.echo(line)


@main.command("explain")
@click.argument("code")
def explain_command(code: str) -> None:
    """Explain rule CODE (or its name): what it does, why, and an example."""
    rule = registry.by_code(code)
    if rule is None:
        raise click.UsageError(f"unknown rule: {code} (`xla-migrate rules` lists them)")
    click.echo(report.explain(rule), nl=False)
