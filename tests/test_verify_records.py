"""What verify makes of its children (issue 30, items 1, 4 and 7c): the record of the process that
trained among those of a run's processes, whatever order they are read in; the exception of a
crash wherever it is in the output; and runs that go again without an instrument the original
script failed under. The unit tests read records and outputs made here; the slow ones run
verify."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_verify
from migrate_xla.verify import Settings, reruns, verify
from migrate_xla.verify.child_output import crash_site, stderr_report
from migrate_xla.verify.children import _merge_records, chosen_record
from migrate_xla.verify.compare import Run

SCRIPTS = ROOT / "tests" / "scripts"
MAIN = 4000
LOSSES = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]


def record(pid: int, losses=(), **fields) -> dict:
    steps = fields.pop("steps", len(losses))
    return {"pid": pid, "role": "reference", "losses": list(losses), "steps": steps, "ordinal": 0, **fields}


# -- item 4: the record of the process that trained -------------------------------------------


def test_the_trainer_wins_over_its_dataloader_workers_in_every_order():
    """Forked DataLoader workers carry a copy of the trainer's losses from when they were forked
    (none for the first epoch's) and write it when stopped with SIGTERM; a worker's pid may be
    lower than the trainer's (pids wrap around)."""
    records = [
        record(MAIN, LOSSES, finished="step-limit"),
        record(17, [], finished="timeout"),  # a first-epoch worker, with a lower pid
        record(4100, LOSSES[:4], finished="timeout"),  # a second-epoch worker
        record(12, LOSSES, finished="timeout", steps=7),  # forked after the last backward
    ]
    for order in itertools.permutations(records):
        assert chosen_record(list(order), MAIN)["pid"] == MAIN


def test_the_spawned_trainer_wins_where_the_started_process_only_launched_it():
    """mp.spawn / torch_xla.launch: the trainers are the children, ordinal 0 first; the stale
    copies that the trainer's own DataLoader workers wrote lose to it."""
    records = [
        record(MAIN, [], finished="exit"),
        record(5000, LOSSES, finished="step-limit", ordinal=1),
        record(5001, LOSSES, finished="step-limit", ordinal=0),
        record(4999, LOSSES[:3], finished="timeout", ordinal=0),
        record(3, LOSSES, finished="timeout", ordinal=0, steps=7),
    ]
    rng = random.Random(0)
    for _ in range(50):
        rng.shuffle(records)
        assert chosen_record(records, MAIN)["pid"] == 5001


def test_an_empty_record_never_wins_and_a_float64_stop_of_any_process_is_seen(tmp_path):
    """No process trained (the run stopped in float64 at its first forward pass): the started
    process's record, not the one the folder lists first; the float64 budget any process went
    past stops the run (its workers' empty records said nothing of it)."""
    (tmp_path / f"reference-{MAIN}.json").write_text(
        json.dumps(record(MAIN, [], finished="float64-cost", float64_cost=9_000_000_000))
    )
    for pid in (11, 12, 9000):
        (tmp_path / f"reference-{pid}.json").write_text(json.dumps(record(pid, [], finished="timeout")))
    (tmp_path / f"progress-{MAIN}.json").write_text(json.dumps({"steps": 0, "losses": 0}))
    run = Run("reference")
    _merge_records(run, tmp_path, MAIN)
    assert run.finished == "float64-cost" and run.float64_cost == 9_000_000_000 and run.losses == []


# -- item 7c: the exception wherever it is in the output ---------------------------------------

TENSOR_ROWS = [" ".join(f"{(i * 7 + j) % 13 / 10:7.4f}" for j in range(9)) for i in range(3000)]


def crashed_printing_a_tensor() -> str:
    """torch.jit.trace's error on XLA, its message followed by the tensor it names (3,000 lines)."""
    return "\n".join(
        [
            "epoch 0: starting",
            "Traceback (most recent call last):",
            '  File "/home/user/train.py", line 40, in <module>',
            "    main()",
            '  File "/home/user/train.py", line 31, in main',
            "    traced = torch.jit.trace(model, example)",
            "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            '  File "/venv/lib/python3.11/site-packages/torch/jit/_trace.py", line 1002, in trace',
            "    return trace_module(",
            "RuntimeError: Cannot insert a Tensor that requires grad as a constant. Consider making it a "
            "parameter or input, or detaching the gradient",
            "Tensor:",
            "(1,1,.,.) = ",
            *TENSOR_ROWS,
            "[ XLAFloatType{1,4,48,48} ]",
        ]
    )


def test_the_exception_of_a_crash_is_found_before_the_tensor_its_message_prints():
    site = crash_site(crashed_printing_a_tensor())
    assert site["exception"].startswith("RuntimeError: Cannot insert a Tensor that requires grad as a constant")
    assert (site["file"], site["line"], site["function"]) == ("/home/user/train.py", 31, "main")
    assert site["exception_text"].startswith("RuntimeError: Cannot insert") and len(site["exception_text"]) <= 2000


def test_the_report_shows_the_traceback_and_its_exception_with_the_printout_cut():
    shown = stderr_report(crashed_printing_a_tensor())
    lines = shown.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert any(line.startswith("RuntimeError: Cannot insert a Tensor") for line in lines)
    assert '  File "/home/user/train.py", line 31, in main' in lines
    assert "[... 2995 more lines ...]" in lines  # 3,003 lines after the exception: 3 shown, 5 at the end
    assert lines[-1] == "[ XLAFloatType{1,4,48,48} ]" and len(lines) < 30


def test_a_tensor_printed_after_the_traceback_does_not_hide_it():
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/home/user/train.py", line 12, in <module>',
            "    loss = model(x)",
            "ValueError: shapes do not match",
            *TENSOR_ROWS,  # printed by the script's exit handler
        ]
    )
    assert crash_site(text)["exception"] == "ValueError: shapes do not match"
    assert "ValueError: shapes do not match" in stderr_report(text)


def test_a_short_output_is_its_tail_as_before():
    text = "\n".join(
        ["line"] * 5 + ["Traceback (most recent call last):", '  File "t.py", line 1, in <module>', "E: x"]
    )
    assert stderr_report(text) == text and crash_site(text)["exception"] == "E: x"
    assert stderr_report("\n".join(TENSOR_ROWS)) == "\n".join(TENSOR_ROWS[-25:])


# -- item 1: both run again without the instrument the original failed under --------------------


def failing(role: str, exception: str, **fields) -> Run:
    return Run(
        role,
        error="exited with status 1",
        returncode=1,
        crash_site={"exception": exception, "exception_text": exception},
        **fields,
    )


def fake_runs(monkeypatch, outcome):
    """reruns.run_all answering ``outcome(float64, align_rng)`` -> {role: Run}; the calls made."""
    calls = []

    def run_all(jobs, args, env, settings, work, float64, python):
        calls.append((float64, settings.align_rng))
        return outcome(float64, settings.align_rng)

    monkeypatch.setattr(reruns, "run_all", run_all)
    return calls


def good(role: str) -> Run:
    return Run(role, losses=LOSSES, returncode=0, finished="step-limit")


RESIZE = "RuntimeError: Trying to resize storage that is not resizable"


def without(runs, settings=None, float64=True):
    return reruns.without_failing_instruments(runs, [], [], {}, settings or Settings(), Path("/nowhere"), float64, None)


def test_a_reference_that_fails_only_in_float64_runs_again_as_written(monkeypatch):
    calls = fake_runs(monkeypatch, lambda f64, rng: {"reference": good("reference"), "migrated": good("migrated")})
    first = {"reference": failing("reference", RESIZE), "migrated": failing("migrated", RESIZE)}
    runs, float64, settings, dropped = without(first)
    assert calls == [(False, True)]  # float64 dropped, the random numbers still aligned
    assert not float64 and settings.align_rng and runs["reference"].error is None
    assert dropped == {"instrument": "float64", "run": "reference", "error": RESIZE, "at": None}


def test_a_dropped_instrument_says_where_the_run_failed_under_it(monkeypatch):
    """The library's frame and version where a library raised it (safetensors' view of a file's
    bytes was the float64 failure of Hugging Face projects)."""
    fake_runs(monkeypatch, lambda f64, rng: {"reference": good("reference"), "migrated": good("migrated")})
    failed = failing("reference", "RuntimeError: shape '[512, 64]' is invalid for input of size 16384")
    library = {"name": "safetensors", "version": "0.6.2", "path": "safetensors/torch.py", "line": 383}
    failed.crash_site.update(file="/w/train.py", line=12, function="<module>", library={**library, "function": "load"})
    _, _, _, dropped = without({"reference": failed, "migrated": good("migrated")})
    assert dropped["at"] == "safetensors/torch.py:383, in load (safetensors 0.6.2)"


def test_a_reference_that_fails_under_the_aligned_random_numbers_runs_without_them(monkeypatch):
    def outcome(f64, rng):
        reference = failing("reference", "IndexError: boom") if rng else good("reference")
        return {"reference": reference, "migrated": good("migrated")}

    calls = fake_runs(monkeypatch, outcome)
    runs, float64, settings, dropped = without(outcome(True, True))
    assert calls == [(False, True), (False, False)]
    assert not settings.align_rng and dropped["instrument"] == "float64 and aligned random numbers"


def test_a_failure_of_the_script_itself_is_reported_as_the_instrumented_runs_saw_it(monkeypatch):
    first = {"reference": failing("reference", "SystemExit: boom at 0x7f00aa"), "migrated": good("migrated")}
    calls = fake_runs(
        monkeypatch,
        lambda f64, rng: {
            "reference": failing("reference", "SystemExit: boom at 0x7f11bb"),
            "migrated": good("migrated"),
        },
    )
    runs, float64, settings, dropped = without(first)
    assert len(calls) == 2 and runs is first and float64 and settings.align_rng and dropped is None


def test_a_migrated_run_is_tried_without_float64_only(monkeypatch):
    first = {"reference": good("reference"), "migrated": failing("migrated", RESIZE)}
    calls = fake_runs(monkeypatch, lambda f64, rng: {"reference": good("reference"), "migrated": good("migrated")})
    runs, float64, _, dropped = without(first)
    assert calls == [(False, True)] and not float64 and dropped["run"] == "migrated"
    calls.clear()
    assert without(first, Settings(precision="float64"))[3] is None and calls == []  # float64 asked for


@pytest.mark.parametrize(
    "error",
    [
        "timed out after 8 s (--timeout)",
        "stopped: another run went past the float64 budget",
        "the script never called backward(): no training loss to compare",
        "ModuleNotFoundError: No module named 'wandb' in /venv/bin/python",
    ],
)
def test_what_no_instrument_causes_runs_once(monkeypatch, error):
    calls = fake_runs(monkeypatch, lambda f64, rng: pytest.fail("ran again"))
    first = {"reference": Run("reference", error=error), "migrated": good("migrated")}
    assert without(first)[3] is None and calls == []


# -- end to end ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_script_that_fails_only_in_float64_matches_as_written_and_the_report_says_why(tmp_path):
    report = tmp_path / "r.json"
    result = run_verify(str(SCRIPTS / "cache_reader.py"), "--steps", "4", "--json", str(report))
    assert result.exit_code == 0, result.output
    assert "float64 dropped: under it the reference run failed (ValueError: cannot reshape array" in result.output
    data = json.loads(report.read_text())
    assert data["verdict"] == "match" and data["tolerance"]["rtol"] == 1e-4
    assert data["dropped_instrument"]["instrument"] == "float64"
    assert data["dropped_instrument"]["error"].startswith("ValueError: cannot reshape array of size 512")


@pytest.mark.slow
def test_a_trainer_with_dataloader_workers_gets_one_verdict_three_times(tmp_path, monkeypatch):
    """Issue 30 item 4: the records of a run's processes resolve to its trainer every time."""
    monkeypatch.chdir(tmp_path)
    example = FIXTURES / "examples" / "workers_float64.py"
    results = [verify(example, ["--workers", "2"], Settings(steps=3)) for _ in range(3)]
    assert {r.verdict for r in results} == {"match"}, [r.message for r in results]
    assert {tuple(r.reference.losses) for r in results} == {tuple(results[0].reference.losses)}
    assert all(r.dropped_instrument is None and r.tolerance_source.startswith("float64") for r in results)
