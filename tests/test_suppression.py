"""Suppression comments as a person meets them in a repository with the hook: a reviewed
finding silenced with ``# noqa: CODE`` stays silent, is not fixed, does not fail the
commit, and is counted by ``--stats``; a comment that silences nothing is reported."""

from __future__ import annotations

import json
import textwrap

from conftest import migrate_with_findings
from test_fixpoint import EVALUATION_LOOP

# An error-level finding (XLA899: CUDA code no rule converts) with its TODO comment.
FLAGGED = "import torch\nstream = torch.cuda.Stream()\n"


def test_a_reviewed_error_no_longer_fails_the_hook(cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(FLAGGED)
    first = cli(str(script))
    assert first.exit_code == 1 and "TODO(xla-migrate)" in script.read_text()
    # the person reads the TODO, deletes it and silences the finding on its line
    lines = [line for line in script.read_text().splitlines() if "TODO(xla-migrate)" not in line]
    reviewed = "\n".join(line + "  # noqa: XLA8" if "Stream()" in line else line for line in lines) + "\n"
    script.write_text(reviewed)
    again = cli(str(script))
    assert again.exit_code == 0, again.output
    assert script.read_text() == reviewed, "the TODO came back, or the file was changed"
    assert cli("--check", str(script)).exit_code == 0


def test_a_suppressed_fix_is_not_applied_and_stats_count_it(cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.ones(2).cuda()  # noqa: XLA103\ny = torch.ones(2).cuda()\n")
    result = cli("--check", "--stats", "--format", "json", str(script))
    report = json.loads(result.stdout)
    [file] = report["files"]
    assert [d["line"] for d in file["diagnostics"] if d["code"] == "XLA103"] == [3]
    assert report["summary"]["suppressed"] == 2  # XLA103, and XLA899 on the CUDA code it left
    row = next(r for r in report["stats"]["rules"] if r["code"] == "XLA103")
    assert (row["count"], row["suppressed"]) == (1, 1)
    cli(str(script))
    assert script.read_text().splitlines()[-2:] == [
        "x = torch.ones(2).cuda()  # noqa: XLA103",
        "y = torch.ones(2).to(torch_xla.device())",
    ]
    text = cli("--check", "--stats", str(script)).output
    assert "XLA103  cuda-method                  fixed 0, remaining 0, suppressed 1" in text


def test_a_file_comment_silences_a_code_everywhere_and_a_bare_noqa_every_code():
    code = """\
        # xla-migrate: noqa: XLA103
        import torch
        a = torch.ones(2).cuda()
        b = torch.ones(2).cuda()
        torch.cuda.synchronize()  # noqa
        device = torch.device("cuda")
    """
    migrated, findings = migrate_with_findings(code)
    assert "a = torch.ones(2).cuda()" in migrated and "b = torch.ones(2).cuda()" in migrated
    assert "torch.cuda.synchronize()  # noqa" in migrated
    assert 'torch.device("cuda")' not in migrated
    reported = sorted({d.code for d in findings if not d.suppressed})
    assert reported == ["XLA101"]


def test_a_compound_statement_comment_covers_its_header_not_its_body():
    code = """\
        import torch
        for batch in loader:  # noqa: XLA302
            batch = batch.to("cuda")
            model(batch).cuda()
    """
    migrated, findings = migrate_with_findings(code)
    assert "for batch in loader:  # noqa: XLA302" in migrated
    assert 'batch = batch.to("cuda")' not in migrated.replace("xla", "cuda") or "MpDeviceLoader" not in migrated
    assert "MpDeviceLoader" not in migrated and "batch = batch.to(" in migrated  # the moves stay with the loader
    assert "model(batch).to(torch_xla.device())" in migrated  # the body is not covered


def test_unused_suppressions_are_reported_for_enabled_codes_only():
    code = textwrap.dedent("""\
        import torch
        x = 1  # noqa: XLA103
        y = 2  # noqa: E501
        z = 3  # noqa: XLA201
    """)
    _, findings = migrate_with_findings(code)
    assert [(d.code, d.line) for d in findings] == [("XLA002", 2), ("XLA002", 4)]
    _, findings = migrate_with_findings(code, select=["XLA002", "XLA1"])
    assert [(d.code, d.line) for d in findings] == [("XLA002", 2)]
    _, findings = migrate_with_findings(code, ignore=["XLA002"])
    assert findings == []


def test_a_comment_covering_what_a_later_pass_finds_is_used():
    """XLA203 syncs an evaluation loop only once XLA302 has wrapped its loader (the second pass)."""
    code = EVALUATION_LOOP.replace(
        "        for data, target in loader:\n                data, target = data.to(device), target.to(device)\n"
        "                output",
        "        for data, target in loader:  # noqa: XLA203\n"
        "                data, target = data.to(device), target.to(device)\n                output",
    )
    assert "# noqa: XLA203" in code
    migrated, findings = migrate_with_findings(code)
    evaluate = migrated[migrated.index("def evaluate") : migrated.index("def train")]
    assert "MpDeviceLoader" in evaluate and "torch_xla.sync()" not in evaluate
    assert "XLA002" not in {d.code for d in findings}
    assert "XLA203" in {d.code for d in findings if d.suppressed}


def test_other_tools_codes_cost_nothing():
    """A quarter of torch's files carry `# noqa: F401`-style comments: they are still parsed as a
    slice (a comment naming a code of this tool's makes the engine parse the file whole)."""
    from migrate_xla.app.run import migrate_code, options_for

    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(150))
    for comment, sliced in (("# noqa: F401", True), ("# noqa: XLA103", False)):
        code = f"import os  {comment}\nimport torch\n\n{body}y = torch.ones(1).cuda()\n"
        phases = []
        migrate_code(code, options_for(), lap=phases.append)
        assert ("slice" in phases) == sliced, (comment, phases)
