"""Mixed-precision rules (XLA4xx) where a snapshot would hide the point."""

from __future__ import annotations

import textwrap

import pytest

from codemods.amp import scaler_analysis
from conftest import migrate, migrate_with_findings

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
    assert (
        "scaler" not in migrated and "GradScaler" not in migrated and "float16" not in migrated.replace("bfloat16", "")
    )
    assert "torch.cuda" not in migrated and "TODO" not in migrated


def test_one_sync_right_after_the_unscaled_step():
    migrated = migrate(
        LOOP.format(imports="", scaler="torch.cuda.amp.GradScaler()", autocast="torch.cuda.amp.autocast()")
    )
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
    analyse = scaler_analysis.analyse
    monkeypatch.setattr(scaler_analysis, "analyse", lambda *args: calls.append(1) or analyse(*args))
    migrate("import torch\nx = torch.randn(2).cuda()\nwith torch.cuda.amp.autocast():\n    y = x * 2\n")
    assert calls == []
    migrate("import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    assert calls == [1]


def test_unsafe_fixes_are_only_hints_by_default():
    code = "import torch\nmodel = torch.nn.Linear(2, 2).half()\nx = torch.zeros(2, dtype=torch.float16)\n"
    assert migrate(code) == code
    assert migrate(code, unsafe_fixes=True).count("torch.bfloat16") == 2


def findings(code: str, **options) -> list[tuple[str, bool]]:
    return [(d.code, d.fixed) for d in migrate_with_findings(code, **options)[1]]


NANOGPT = """\
    import torch
    from contextlib import nullcontext
    device = "cuda"
    dtype = {dtype}
    device_type = "cuda" if "cuda" in device else "cpu"
    ptdtype = {{"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    """


@pytest.mark.parametrize(
    "dtype, migrated_dtype",
    [
        ('"float32"', 'dtype = "float32"'),
        ('"float16"', 'dtype = "bfloat16"'),
        (
            "'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'",
            "dtype = 'bfloat16'",
        ),
    ],
)
def test_the_users_dtype_choice_survives_and_float16_is_mapped_where_it_is_chosen(dtype, migrated_dtype):
    migrated = migrate(NANOGPT.format(dtype=dtype))
    assert migrated_dtype in migrated.splitlines()
    assert '"float16": torch.bfloat16}[dtype]' in migrated  # a --dtype=float16 override is bfloat16 too
    assert "torch.amp.autocast(device_type=device_type, dtype=ptdtype)" in migrated
    assert migrate(migrated) == migrated


def test_float16_autocast_on_a_device_variable_keeps_the_variable():
    migrated = migrate(
        """\
        import torch
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
        with torch.autocast(device_type=device_type, dtype=torch.float16):
            pass
        with torch.autocast(device_type=device_type):
            pass
        """
    )
    assert migrated.count("torch.autocast(device_type=device_type, dtype=torch.bfloat16)") == 2


def test_a_choice_used_outside_autocast_is_guarded_at_the_autocast_and_left_to_xla405():
    code = """\
        import torch
        ptdtype = {"float32": torch.float32, "float16": torch.float16}[args.dtype]
        model = model.to(ptdtype)
        with torch.autocast("cuda", dtype=ptdtype):
            pass
        """
    migrated = migrate(code)
    assert 'torch.autocast("xla", dtype=torch.bfloat16 if ptdtype == torch.float16 else ptdtype)' in migrated
    assert '"float16": torch.float16}' in migrated  # changing it would change the model's dtype too
    assert ("XLA405", False) in findings(code)
    unsafe = migrate(code, unsafe_fixes=True)
    assert '"float16": torch.bfloat16}' in unsafe and "ptdtype == torch.float16" in unsafe
    assert migrate(unsafe, unsafe_fixes=True) == unsafe


def test_getattr_torch_follows_the_argparse_default():
    migrated = migrate(
        """\
        import argparse
        import torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp-dtype", default="float16")
        args = parser.parse_args()
        with torch.cuda.amp.autocast(dtype=getattr(torch, args.amp_dtype)):
            pass
        """
    )
    # the default is mapped where it is chosen (XLA401), a value given at run time where it is read (XLA406)
    assert 'parser.add_argument("--amp-dtype", default="bfloat16", type=lambda name: "bfloat16" if name in' in migrated
    assert 'torch.autocast("xla", dtype=getattr(torch, args.amp_dtype))' in migrated


def test_a_key_the_table_does_not_have_is_not_written():
    migrated = migrate(
        """\
        import torch
        precision = "fp16"
        amp_dtype = {"fp32": torch.float32, "fp16": torch.float16}[precision]
        with torch.autocast("cuda", dtype=amp_dtype):
            pass
        """
    )
    assert 'precision = "fp16"' in migrated  # "bf16" would be a KeyError
    assert '"fp16": torch.bfloat16}' in migrated


def test_a_test_that_does_more_than_decide_is_not_dropped():
    migrated = migrate(
        """\
        import torch
        dtype = "bfloat16" if probe_bf16() else "float16"
        ptdtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        with torch.autocast("cuda", dtype=ptdtype):
            pass
        """
    )
    assert 'dtype = "bfloat16" if probe_bf16() else "bfloat16"' in migrated


def test_cpu_autocast_choices_are_not_touched():
    code = """\
        import torch
        ptdtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        with torch.autocast("cpu", dtype=ptdtype):
            pass
        """
    assert migrate(code) == textwrap.dedent(code)
    assert findings(code) == [("XLA405", False)]


def test_a_scaler_that_stays_is_disabled_once_the_dtype_is_mapped():
    migrated = migrate(
        """\
        import torch
        dtype = "float16"
        ptdtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
        with torch.autocast("cuda", dtype=ptdtype):
            loss = model(x)
        scaler.scale(loss).backward()
        print(scaler.is_enabled())
        """
    )
    assert 'dtype = "bfloat16"' in migrated
    assert 'scaler = torch.amp.GradScaler("xla", enabled=(dtype == "float16"))' in migrated  # False now
