"""Mixed-precision rules (XLA4xx) where a snapshot would hide the point."""

from __future__ import annotations

import textwrap

import pytest

import codemods.amp
from migrate_xla.engine import migrate_code, options_for


def migrate(code: str, **options) -> str:
    return migrate_code(textwrap.dedent(code), options_for(**options))[0]


LOOP = """\
    import torch
    {imports}

    def train(model, loader, optimizer):
        scaler = {scaler}
        for x, y in loader:
            optimizer.zero_grad()
            with {autocast}:
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
    """


@pytest.mark.parametrize(
    "imports, scaler, autocast",
    [
        ("", "torch.cuda.amp.GradScaler()", "torch.cuda.amp.autocast()"),
        ("from torch.cuda.amp import GradScaler, autocast", "GradScaler(enabled=True)", "autocast(enabled=True)"),
        ("from torch.cuda import amp", "amp.GradScaler()", "amp.autocast(dtype=torch.float16)"),
        ("import torch as t", 't.amp.GradScaler("cuda")', 't.autocast(device_type="cuda", dtype=t.float16)'),
        ("from torch.amp import GradScaler as GS, autocast as ac", "GS()", 'ac("cuda")'),
        ("from torch import GradScaler, autocast", 'GradScaler(device="cuda")', 'autocast("cuda", torch.float16)'),
    ],
)
def test_every_spelling_becomes_bfloat16_without_a_scaler(imports, scaler, autocast):
    migrated = migrate(LOOP.format(imports=imports, scaler=scaler, autocast=autocast))
    assert 'torch.autocast("xla", dtype=torch.bfloat16' in migrated
    assert "scaler" not in migrated and "GradScaler" not in migrated and "float16" not in migrated.replace("bfloat16", "")
    assert "torch.cuda" not in migrated and "TODO" not in migrated


def test_one_sync_right_after_the_unscaled_step():
    migrated = migrate(LOOP.format(imports="", scaler="torch.cuda.amp.GradScaler()", autocast="torch.cuda.amp.autocast()"))
    body = [line.strip() for line in migrated.splitlines()]
    step = body.index("optimizer.step()")
    assert body[step + 1] == "torch_xla.sync()"
    assert migrated.count("torch_xla.sync()") == 1
    assert body[step - 1] == "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"  # clipping stays
    assert migrate(migrated) == migrated


def test_device_strings_of_autocast_are_left_to_the_amp_rules():
    code = 'import torch\nwith torch.autocast(device_type="cuda", dtype=torch.float16):\n    pass\n'
    without_amp = migrate(code, ignore=["XLA4"])
    assert 'device_type="cuda"' in without_amp and "float16" in without_amp  # not half-migrated to "xla"
    assert 'torch.autocast("xla", dtype=torch.bfloat16)' in migrate(code)


def test_a_scaler_passed_to_code_elsewhere_stays_and_is_flagged():
    migrated = migrate(
        """\
        import torch
        from engine import fit
        scaler = torch.cuda.amp.GradScaler()
        fit(scaler)
        """
    )
    assert 'scaler = torch.amp.GradScaler("xla")' in migrated
    assert migrated.count("# TODO(xla-migrate): XLA402") == 1
    assert "XLA899" not in migrated


def test_checkpoints_written_before_the_migration_still_load():
    migrated = migrate(
        """\
        import torch
        scaler = torch.cuda.amp.GradScaler()
        def resume(path, model):
            state = torch.load(path)
            model.load_state_dict(state["model"])
            scaler.load_state_dict(state["scaler"])
        def save(path, model):
            torch.save({"model": model.state_dict(), "scaler": scaler.state_dict()}, path)
        """
    )
    assert "scaler" not in migrated.replace('state["model"]', "")
    assert 'model.load_state_dict(state["model"])' in migrated


def test_the_scaler_analysis_runs_only_in_files_that_name_a_scaler(monkeypatch):
    calls = []
    analyse = codemods.amp._analyse
    monkeypatch.setattr(codemods.amp, "_analyse", lambda *args: calls.append(1) or analyse(*args))
    migrate("import torch\nx = torch.randn(2).cuda()\nwith torch.cuda.amp.autocast():\n    y = x * 2\n")
    assert calls == []
    migrate("import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    assert calls == [1]


def test_unsafe_fixes_are_only_hints_by_default():
    code = "import torch\nmodel = torch.nn.Linear(2, 2).half()\nx = torch.zeros(2, dtype=torch.float16)\n"
    assert migrate(code) == code
    assert migrate(code, unsafe_fixes=True).count("torch.bfloat16") == 2
