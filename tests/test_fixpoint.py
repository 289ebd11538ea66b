"""One run is a fixpoint: what a run writes, a second run leaves exactly as it is.

A rule may act on what another rule's fix made (XLA203 syncs an evaluation loop once
XLA302 has wrapped its loader), so a run repeats the rules over their own output until it
changes no more (run.migrate_code). These tests migrate every fixture, example and
notebook fixture under each target and fix mode through the command line, then migrate
what it wrote again.
"""

from __future__ import annotations

import itertools
import json
import shutil
import textwrap

import pytest

from conftest import FIXTURES
from migrate_xla.app import run
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.rule.findings import RUNTIMES, TARGETS

# (runtime, target, fixes): PyTorch/XLA under each target; TorchTPU has one (Settings.checked)
MODES = [
    *itertools.product(RUNTIMES[:1], TARGETS, ("safe", "unsafe")),
    *itertools.product(RUNTIMES[1:], TARGETS[:1], ("safe", "unsafe")),
]


def _tree(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("runtime", "target", "fixes"), MODES, ids=["-".join(mode) for mode in MODES])
def test_a_second_run_changes_nothing_it_wrote(tmp_path, cli, runtime, target, fixes):
    """Every .py and .ipynb file under fixtures/ (the snapshot fixtures, the examples, the
    notebook fixtures) and Accelerate's config files, written with -o, then migrated again in
    place: no file changes."""
    flags = ["--runtime", runtime, "--target", target, "-j", "2", "--exit-zero", "--format", "json"]
    if fixes == "unsafe":
        flags.append("--unsafe-fixes")
    source = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, source)
    first = tmp_path / "first"
    result = cli(*flags, "-o", str(first), str(source))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert not [f["path"] for f in report["files"] if f.get("error")], "files the first run could not migrate"
    assert sum(f["changed"] for f in report["files"]) > 40, "the first run changed too little to prove anything"
    written = _tree(first)
    assert any(p.suffix == ".ipynb" for p in written), "no notebook came through the first run"
    assert any(p.suffix == ".yaml" for p in written), "no Accelerate config came through the first run"

    result = cli(*flags, str(first))
    again = json.loads(result.stdout)
    changed = [f["path"] for f in again["files"] if f["changed"]]
    assert not changed, f"a second run changed {changed}"
    assert not [d for f in again["files"] for d in f["diagnostics"] if d["fixed"]], "a second run fixed something"
    assert _tree(first) == written


# The two cases the issue found: what one rule's fix makes, another rule acts on.
EVALUATION_LOOP = """\
    import torch
    from torch.utils.data import DataLoader

    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")


    def evaluate(model, device, loader):
        model.eval()
        with torch.no_grad():
            for data, target in loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                print(output.sum())


    def train(model, device, loader, optimizer):
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = model(data).sum()
            loss.backward()
            optimizer.step()
"""

ACCELERATOR_DEVICE = """\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader

    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(device)
    loader = DataLoader(range(8), batch_size=2)
    for x in loader:
        x = x.to(device)
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("code", "wanted"),
    [(EVALUATION_LOOP, {"XLA302", "XLA203"}), (ACCELERATOR_DEVICE, {"XLA302", "XLA109"})],
    ids=["evaluation-loop", "accelerator-device"],
)
def test_fixes_that_follow_other_fixes_come_in_the_first_run(code, wanted):
    code = textwrap.dedent(code)
    migrated, diagnostics = migrate_code(code, options_for())
    assert wanted <= {d.code for d in diagnostics if d.fixed}
    assert migrate_code(migrated, options_for())[0] == migrated
    if "evaluate" in code:  # the evaluation loop is cut once its loader is a device loader
        evaluate = migrated[migrated.index("def evaluate") : migrated.index("def train")]
        assert "MpDeviceLoader" in evaluate and "torch_xla.sync()" in evaluate


def test_the_findings_of_later_passes_are_on_the_lines_of_the_input():
    code = textwrap.dedent(EVALUATION_LOOP)
    _, diagnostics = migrate_code(code, options_for())
    lines = code.splitlines()
    for d in diagnostics:
        assert 1 <= d.line <= len(lines)
    sync = [d for d in diagnostics if d.code == "XLA203"]
    assert sync and all("evaluate" not in lines[d.line - 1] for d in sync)
    assert any(9 <= d.line <= 14 for d in sync), "the evaluation loop's sync is not reported in the loop"


def test_a_later_pass_finding_on_a_line_rewritten_in_place_keeps_its_line():
    """A line the first pass rewrote (not moved) stays that line for the second pass's findings:
    XLA405 converts the float16 XLA110 wrote on line 4, not on line 2 where the rewritten run starts."""
    code = "import torch\nmodel = Net().cuda().half()\nx = torch.zeros(2, device='cuda')\ny = x.type(torch.cuda.HalfTensor)\n"
    _, diagnostics = migrate_code(code, options_for(unsafe_fixes=True))
    later = [d for d in diagnostics if d.code == "XLA405" and "torch.float16" in d.message]
    assert later and all(d.line == 4 for d in later), [(d.line, d.message) for d in later]
    assert run._line_mover("a\nX\nY\nb\n", "a\nX2\nY2\nb\n")(3) == 3  # replaced line by line
    assert run._line_mover("a\nX\nY\nb\n", "a\nZ\nb\n")(3) == 2  # reshaped: where it starts


def test_check_reports_the_code_as_it_is_in_one_pass(cli, tmp_path):
    """--check (ruff's check: no fixes applied) runs the rules once; it says the file would change all the same."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(EVALUATION_LOOP))
    result = cli("--check", "--format", "json", str(script))
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["files"][0]["changed"]
    assert script.read_text() == textwrap.dedent(EVALUATION_LOOP)


def test_a_unit_that_reaches_no_fixpoint_is_left_and_named(monkeypatch, cli, tmp_path):
    monkeypatch.setattr(run, "MAX_PASSES", 1)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(EVALUATION_LOOP))
    result = cli(str(script))
    assert result.exit_code == 2
    assert "reaches no fixpoint" in result.output and "XLA302" in result.output
    assert script.read_text() == textwrap.dedent(EVALUATION_LOOP)
