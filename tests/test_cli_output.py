"""What a run prints: the output formats (text, JSON, SARIF, GitHub annotations), ``--stats``,
``--quiet``, and colour on a terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cli_helpers import CLEAN, FIXABLE, UNFIXABLE, is_migrated, run
from conftest import write

# -- output formats ------------------------------------------------------------------


def test_json_format_follows_the_documented_schema(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "streams.py", UNFIXABLE)
    write(tmp_path / "clean.py", CLEAN)
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    result = cli("--check", "--format", "json", str(tmp_path))
    assert result.exit_code == 2
    report = json.loads(result.stdout)  # the whole stdout is one JSON document
    assert set(report) >= {"files", "summary"}
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    assert set(by_name) == {"train.py", "streams.py", "clean.py", "broken.py"}
    for entry in report["files"]:
        assert set(entry) >= {"path", "changed", "diagnostics"}
        for d in entry["diagnostics"]:
            assert set(d) >= {"code", "message", "line", "column", "severity", "fixed"}
            assert isinstance(d["line"], int) and isinstance(d["column"], int) and isinstance(d["fixed"], bool)
            assert d["severity"] in ("error", "warning", "info")
    assert by_name["train.py"]["changed"] is True
    assert {d["code"] for d in by_name["train.py"]["diagnostics"]} == {"XLA101", "XLA103"}
    assert all(d["fixed"] for d in by_name["train.py"]["diagnostics"])
    (stream,) = by_name["streams.py"]["diagnostics"]
    assert (stream["code"], stream["severity"], stream["fixed"], stream["line"]) == ("XLA899", "error", False, 2)
    assert by_name["clean.py"] == {"path": by_name["clean.py"]["path"], "changed": False, "diagnostics": []}
    assert "line 2" in by_name["broken.py"]["error"]
    summary = report["summary"]
    assert (summary["files"], summary["changed"], summary["errors"], summary["remaining_errors"]) == (4, 2, 1, 1)


def test_json_format_in_write_mode_reports_what_was_written(tmp_path, cli):
    path = write(tmp_path / "train.py", FIXABLE)
    result = cli("--format", "json", str(path))
    assert result.exit_code == 1
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["changed"] is True and is_migrated(path.read_text())


def test_sarif_format_is_valid_sarif(tmp_path, cli):
    write(tmp_path / "streams.py", UNFIXABLE)
    result = cli("--check", "--format", "sarif", str(tmp_path))
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["XLA899"]
    (finding,) = run_["results"]
    assert finding["ruleId"] == "XLA899" and finding["level"] == "error"
    location = finding["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("streams.py")
    assert location["region"] == {"startLine": 2, "startColumn": 1}


def test_github_format_prints_annotations(tmp_path, cli):
    write(tmp_path / "streams.py", UNFIXABLE)
    result = cli("--check", "--format", "github", str(tmp_path))
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    assert re.match(r"^::error title=xla-migrate \(XLA899\),file=[^,]*streams\.py,line=2,col=1::.*XLA899 ", line)


def test_stats_counts_per_rule_and_per_file(tmp_path, cli):
    write(tmp_path / "a.py", FIXABLE)
    write(tmp_path / "b.py", FIXABLE.replace("x =", "y = torch.zeros(1).cuda()\nx ="))
    write(tmp_path / "c.py", CLEAN)
    result = cli("--check", "--stats", str(tmp_path))
    lines = result.stdout.splitlines()
    by_rule = lines[lines.index("Findings by rule:") + 1 : lines.index("Findings by file:")]
    by_file = lines[lines.index("Findings by file:") + 1 :]
    assert [(line.split()[0], line.split()[1]) for line in by_rule] == [("2", "XLA101"), ("3", "XLA103")]
    assert [(line.split()[0], Path(line.split()[1]).name) for line in by_file] == [("3", "b.py"), ("2", "a.py")]


def test_stats_in_json(tmp_path, cli):
    write(tmp_path / "a.py", FIXABLE)
    report = json.loads(cli("--check", "--stats", "--format", "json", str(tmp_path)).stdout)
    assert {row["code"]: row["count"] for row in report["stats"]["rules"]} == {"XLA101": 1, "XLA103": 1}
    assert [row["count"] for row in report["stats"]["files"]] == [2]


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_stats_with_sarif_or_github_is_a_usage_error(tmp_path, cli, fmt):
    # as ruff's --statistics: these formats have no place for counts, so --stats is refused, not dropped
    path = write(tmp_path / "a.py", FIXABLE)
    for mode in ("--check", "--exit-zero"):
        result = cli(mode, "--stats", "--format", fmt, str(path))
        assert result.exit_code == 2
        assert f"--stats works with --format text or json, not {fmt}" in result.stderr
        assert result.stdout == ""
    assert path.read_text() == FIXABLE


# -- habits of ruff users ------------------------------------------------------------------


def test_quiet_prints_findings_and_errors_but_no_summary(tmp_path, cli):
    write(tmp_path / "train.py", FIXABLE)
    write(tmp_path / "streams.py", UNFIXABLE)
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    loud = cli("--check", str(tmp_path))
    assert "files would be migrated" in loud.stderr
    quiet = cli("--check", "-q", str(tmp_path))
    assert quiet.exit_code == loud.exit_code == 2
    assert quiet.stdout == loud.stdout and "XLA899" in quiet.stdout  # the same findings
    (error,) = quiet.stderr.splitlines()  # the error, and not the closing line
    assert error.startswith(f"{tmp_path / 'broken.py'}: error: cannot parse: line 2")
    assert cli("--quiet", str(tmp_path)).stderr.splitlines() == quiet.stderr.splitlines()


def run_on_a_terminal(*args: str, cwd: Path, **env: str) -> str:
    """The console entry point with stdout and stderr on a pseudo-terminal; what it printed."""
    import pty

    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "migrate_xla", *args], cwd=cwd, stdout=follower, stderr=follower, env={**environ, **env}
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_off_with_no_color_or_a_pipe(tmp_path):
    write(tmp_path / "streams.py", UNFIXABLE)
    coloured = run_on_a_terminal("--check", "streams.py", cwd=tmp_path)
    assert click.style("XLA899", fg="red", bold=True) in coloured
    assert click.style("streams.py", bold=True) + ":2:1:" in coloured
    plain = run_on_a_terminal("--check", "streams.py", cwd=tmp_path, NO_COLOR="1")
    assert "\x1b[" not in plain and "streams.py:2:1: XLA899 " in plain
    piped = run("--check", "streams.py", cwd=tmp_path)
    assert piped.stdout.startswith(b"streams.py:2:1: XLA899 ") and b"\x1b[" not in piped.stdout + piped.stderr
