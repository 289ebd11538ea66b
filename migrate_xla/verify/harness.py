"""Runs the original and the migrated script as child processes and compares their losses.

The parent never imports torch: the children do, instrumented by ``child.py`` through
the ``sitecustomize`` on the PYTHONPATH it injects. Both children start in the
caller's working directory with the same arguments and environment; the migrated one
runs a migrated copy of the script's project in a temporary folder, so sibling
imports resolve to migrated modules. The user's files are never written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import migrate_xla
from migrate_xla.engine import migrate_files, options_for
from migrate_xla.sources import find_sources, write_copy
from migrate_xla.verify.compare import Result, Run, compare

INSTRUMENT = Path(__file__).resolve().parent / "instrument"
PACKAGE_ROOT = Path(migrate_xla.__file__).resolve().parent.parent
TRACE_FORMAT = "xla-migrate-reference/1"
TORCHRUN_VARIABLE = re.compile(r"""environ(?:\.get)?\s*[\[(]\s*['"](?:LOCAL_RANK|RANK|WORLD_SIZE)['"]|getenv\(\s*['"](?:LOCAL_RANK|RANK|WORLD_SIZE)""")


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
    unsafe_fixes: bool = False
    target: str = "single"  # the --target the script is migrated to


def verify(
    script: Path,
    args: list[str] = (),
    settings: Settings | None = None,
    migrated: Path | None = None,
    project: Path | None = None,
    reference_trace: Path | None = None,
) -> Result:
    """Migrate (unless ``migrated`` is given), run both sides, compare."""
    settings = settings or Settings()
    script = script.resolve()
    if not script.is_file():
        raise VerifyError(f"no such script: {script}")
    with tempfile.TemporaryDirectory(prefix="xla-migrate-verify-") as tmp:
        work = Path(tmp)
        if migrated is None:
            migrated, migrated_root = migrate_project(script, (project or script.parent).resolve(), work / "migrated", settings)
        else:
            migrated = migrated.resolve()
            if not migrated.is_file():
                raise VerifyError(f"no such migrated script: {migrated}")
            migrated_root = migrated.parent
        env = _shared_environment(script)
        jobs = [("migrated", migrated, [str(migrated_root)])]
        if reference_trace is None:
            jobs.append(("reference", script, []))
        runs = _run_all(jobs, list(args), env, settings, work)
        reference = runs["reference"] if reference_trace is None else load_trace(reference_trace)
        return compare(reference, runs["migrated"], settings.rtol, settings.atol)


def record_reference(script: Path, args: list[str], settings: Settings, trace: Path) -> Run:
    """Run only the reference (on a GPU machine, say) and save its losses to ``trace``."""
    script = script.resolve()
    if not script.is_file():
        raise VerifyError(f"no such script: {script}")
    with tempfile.TemporaryDirectory(prefix="xla-migrate-verify-") as tmp:
        run = _run_all([("reference", script, [])], list(args), _shared_environment(script), settings, Path(tmp))["reference"]
    if run.error is None:
        trace.write_text(
            json.dumps(
                {"format": TRACE_FORMAT, "script": script.name, "args": list(args), "steps": settings.steps,
                 "device": run.device, "precision": run.precision, "losses": run.losses},
                indent=2,
            )
        )
    return run


def load_trace(path: Path) -> Run:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise VerifyError(f"cannot read reference trace {path}: {exc}") from None
    if data.get("format") != TRACE_FORMAT:
        raise VerifyError(f"{path} is not a reference trace written by --save-reference")
    return Run("reference", device=f"{data['device']} (saved trace)", losses=data["losses"], precision=data["precision"])


def migrate_project(script: Path, project: Path, out: Path, settings: Settings) -> tuple[Path, Path]:
    """Migrate the .py files of ``project`` into ``out``; returns the migrated script and root."""
    try:
        script.relative_to(project)
    except ValueError:
        raise VerifyError(f"{script} is not inside the project folder {project}") from None
    files = list(find_sources([project]))
    if not any(f.path.resolve() == script for f in files):
        files.append(next(iter(find_sources([script]))))
    target_of = {}
    for result in migrate_files(files, options_for(unsafe_fixes=settings.unsafe_fixes, target=settings.target), jobs=1):
        rel = result.found.path.resolve().relative_to(project)
        target = out / rel
        if result.error is not None:
            if result.found.path.resolve() == script:
                raise VerifyError(f"cannot migrate {script}: {result.error}")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(result.found.path, target)  # run unmigrated rather than missing
        else:
            write_copy(target, result.source, result.new_text)
        target_of[result.found.path.resolve()] = target
    return target_of[script], out


def _shared_environment(script: Path) -> dict[str, str]:
    """What both children get: the caller's environment, plus a one-process torchrun setup
    (MASTER_PORT comes per child, in ``_run_child``)."""
    env = dict(os.environ)
    try:
        text = script.read_text(errors="replace")
    except OSError:
        text = ""
    if TORCHRUN_VARIABLE.search(text):
        for key, value in {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
                           "MASTER_ADDR": "127.0.0.1"}.items():
            env.setdefault(key, value)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_all(jobs, args, env, settings: Settings, work: Path) -> dict[str, Run]:
    """Run the children side by side (they are independent); returns a Run per role."""
    runs: dict[str, Run] = {}
    threads = [
        threading.Thread(target=lambda j=job: runs.__setitem__(j[0], _run_child(*j, args, env, settings, work)))
        for job in jobs
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return runs


def _run_child(role: str, script: Path, extra_path: list[str], args, env, settings: Settings, work: Path) -> Run:
    records = work / f"records-{role}"
    records.mkdir()
    child_env = dict(env)
    # Each child its own rendezvous port (the two run side by side and would both serve one),
    # unless the caller chose one; a script's os.environ.setdefault("MASTER_PORT", ...) keeps it.
    child_env.setdefault("MASTER_PORT", str(_free_port()))
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(INSTRUMENT), *extra_path, *filter(None, [env.get("PYTHONPATH")]), str(PACKAGE_ROOT)]
    )
    child_env["XLA_MIGRATE_VERIFY"] = json.dumps(
        {"role": role, "record_dir": str(records), "steps": settings.steps,
         "align_rng": settings.align_rng}
    )
    if role == "migrated":
        child_env["PJRT_DEVICE"] = settings.device or env.get("PJRT_DEVICE") or "CPU"
    run = Run(role)
    started = time.monotonic()
    with open(work / f"{role}.stdout", "wb") as out, open(work / f"{role}.stderr", "wb") as err:
        process = subprocess.Popen(
            [sys.executable, str(script), *args], cwd=os.getcwd(), env=child_env,
            stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            run.returncode = process.wait(timeout=settings.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            run.error = f"timed out after {settings.timeout:g} s (--timeout)"
    run.wall_s = time.monotonic() - started
    run.stderr_tail = _tail(work / f"{role}.stderr")
    _merge_records(run, records)
    # A crash after some steps is a crash too; the step limit is not (torch_xla.launch's pool
    # turns a worker's clean stop into exit status 1 of the parent).
    if run.error is None and run.returncode not in (0, None) and run.finished != "step-limit":
        run.error = f"exited with status {run.returncode}" + (f" after {len(run.losses)} steps" if run.losses else "")
    elif run.error is None and not run.losses:
        run.error = "the script never called backward(): no training loss to compare"
    return run


def _merge_records(run: Run, folder: Path) -> None:
    records = []
    for path in folder.glob("*.json"):
        try:
            records.append(json.loads(path.read_text()))
        except ValueError:
            continue
    training = sorted((r for r in records if r.get("losses")), key=lambda r: (r.get("ordinal", 0), r["pid"]))
    chosen = training[0] if training else (records[0] if records else None)
    if chosen is None:
        return
    run.device = chosen.get("device", "")
    run.finished = chosen.get("finished", "")
    run.losses = chosen.get("losses", [])
    run.precision = chosen.get("precision", "float32")
    for key in ("compilations", "recompilations", "executions"):
        if key in chosen:
            setattr(run, key, chosen[key])
    run.cpu_fallback_ops = chosen.get("cpu_fallback_ops", {})
    if chosen.get("error"):
        run.error = chosen["error"]


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
