"""Mixed-precision rules (XLA4xx) where a snapshot would hide the point."""

from __future__ import annotations

import textwrap

import pytest

from codemods.amp import scaler_analysis
from conftest import codes, migrate, migrate_with_findings

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
    # a .half() conversion held back is marked (the script computes in float16); the dtype is a hint
    mark = "# TODO(xla-migrate): XLA405 `torch.nn.Linear(2, 2).half()` -> `torch.nn.Linear(2, 2).to(torch.bfloat16)`"
    migrated = migrate(code)
    assert (
        migrated.startswith(f"import torch\n{mark}") and migrated.replace(migrated.splitlines()[1] + "\n", "") == code
    )
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


# -- autocast prepared with functools.partial (timm's amp_autocast) ------------------------


@pytest.mark.parametrize(
    "text",
    ["amp_autocast = partial(torch.autocast, device_type='cuda')", "partial(torch.cuda.amp.autocast)"],
)
def test_the_choice_analysis_wakes_on_a_partial_of_autocast(text):
    from codemods.amp.dtype_choices import AUTOCAST_CALL

    assert AUTOCAST_CALL.search(text)


def test_a_partial_is_migrated_argument_by_argument_as_a_direct_call():
    partial_code = migrate(
        "import torch\nfrom functools import partial\nac = partial(torch.cuda.amp.autocast, True, torch.half)\n"
    )
    direct = migrate("import torch\nac = torch.cuda.amp.autocast(True, torch.half)\n")
    assert 'partial(torch.autocast, "xla", dtype=torch.bfloat16, enabled=True)' in partial_code
    assert 'torch.autocast("xla", dtype=torch.bfloat16, enabled=True)' in direct


def test_the_type_of_a_cuda_device_is_the_xla_device_type():
    migrated = migrate(
        """\
        import torch
        from functools import partial
        device = torch.device("cuda")
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.bfloat16)
        with torch.autocast(device.type):
            pass
        """
    )
    assert 'amp_autocast = partial(torch.autocast, "xla", dtype=torch.bfloat16)' in migrated
    assert 'with torch.autocast("xla", dtype=torch.bfloat16):' in migrated


@pytest.mark.parametrize("call", ["amp_autocast(torch.float16)", "amp_autocast(dtype=torch.float16)"])
def test_a_partial_called_with_autocast_arguments_is_flagged_not_rewritten(call):
    code = f"""\
        import torch
        from functools import partial
        amp_autocast = partial(torch.autocast, "cuda")
        with {call}:
            pass
        """
    migrated, diagnostics = migrate_with_findings(code)
    assert 'partial(torch.autocast, "cuda")' in migrated
    flagged = [d for d in diagnostics if d.code == "XLA401"]
    assert len(flagged) == 1 and not flagged[0].fixed
    assert 'partial(torch.autocast, "xla", dtype=torch.bfloat16)' in flagged[0].message


# -- NVIDIA apex amp (XLA408) -----------------------------------------------------------------

APEX = """\
    import torch
    from apex import amp
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {initialize}
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    """


@pytest.mark.parametrize(
    "initialize, autocast",
    [
        ('model, optimizer = amp.initialize(model, optimizer, opt_level="O1")', True),
        ("model, optimizer = amp.initialize(model, optimizer)", True),  # apex's default is O1
        ('model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)', True),
        ('model, optimizer = amp.initialize(model, optimizer, opt_level="O0")', False),  # float32
        ('model, optimizer = amp.initialize(model, optimizer, enabled=False, opt_level="O1")', False),
    ],
)
def test_apex_amp_goes_and_o1_o2_become_bfloat16_autocast(initialize, autocast):
    migrated, diagnostics = migrate_with_findings(APEX.format(initialize=initialize), select=["XLA4", "XLA8"])
    assert "amp" not in migrated.replace("autocast", "")
    assert ('with torch.autocast("xla", dtype=torch.bfloat16):\n        loss = model(x).sum()' in migrated) is autocast
    assert "    loss.backward()\n" in migrated
    assert all(d.fixed for d in diagnostics) and {d.code for d in diagnostics} == {"XLA408"}


def test_new_names_for_what_initialize_returns_are_assigned_its_arguments():
    migrated = migrate(APEX.format(initialize='net, opt = amp.initialize(model, optimizer, opt_level="O0")'))
    assert "net, opt = model, optimizer" in migrated
    migrated = migrate(APEX.format(initialize='net = amp.initialize(model, opt_level="O0")'))
    assert "net = model\n" in migrated


@pytest.mark.parametrize(
    "initialize, why",
    [
        ("model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)", "chosen at run time"),
        ('model, optimizer = amp.initialize(model, optimizer, enabled=args.amp, opt_level="O1")', "`enabled="),
        ('model, optimizer = amp.initialize(model, optimizer, opt_level="O3")', "O3"),
        ("model, optimizer = amp.initialize(model, optimizer, patch_torch_functions=False)", "overrides"),
        ('if args.amp: model, optimizer = amp.initialize(model, optimizer, opt_level="O1")', "condition"),
        ('model, optimizer = amp.initialize(model, optimizer, opt_level="O1"); amp.initialize(model)', "2 times"),
    ],
)
def test_an_initialize_xla_migrate_cannot_place_is_flagged_once_and_kept(initialize, why):
    migrated, diagnostics = migrate_with_findings(APEX.format(initialize=initialize))
    flagged = [d for d in diagnostics if not d.fixed]
    assert [d.code for d in flagged] == ["XLA408"] * len(flagged) and flagged  # XLA807 leaves it to XLA408
    assert why in flagged[0].message and 'torch.autocast("xla", dtype=torch.bfloat16)' in flagged[0].message
    assert "amp.initialize(" in migrated and "from apex import amp" in migrated
    assert "    loss.backward()\n" in migrated  # scale_loss is converted all the same


def test_a_forward_pass_in_another_function_is_not_guessed():
    migrated, diagnostics = migrate_with_findings(
        """\
        import torch
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        def step(batch):
            loss = compute_loss(batch)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        """
    )
    assert "autocast" not in migrated.split("TODO")[0] and "amp.initialize(" in migrated
    assert [(d.code, d.fixed) for d in diagnostics] == [("XLA408", False), ("XLA408", True)]


def test_a_scaled_loss_read_twice_is_computed_once():
    migrated = migrate(
        """\
        from apex import amp
        with amp.scale_loss(loss / accum, optimizer) as scaled_loss:
            scaled_loss.backward(retain_graph=True)
            log(scaled_loss)
        """
    )
    assert "scaled_loss = loss / accum\nscaled_loss.backward(retain_graph=True)\nlog(scaled_loss)\n" in migrated


@pytest.mark.parametrize(
    "loss, rebinding",
    [("loss", "loss = loss.detach()"), ("loss / accum", "accum = 1"), ("self.loss", "self.loss = None")],
)
def test_a_scaled_loss_whose_names_the_block_rebinds_is_computed_first(loss, rebinding):
    migrated = migrate(
        f"""\
        from apex import amp
        with amp.scale_loss({loss}, optimizer) as scaled_loss:
            {rebinding}
            scaled_loss.backward()
        """
    )
    assert f"scaled_loss = {loss}\n{rebinding}\nscaled_loss.backward()\n" in migrated


def test_master_params_iterates_the_optimizer_groups_as_apex_does():
    migrated = migrate("from apex import amp\nparams = list(amp.master_params(self.optimizer))\n")
    assert migrated == 'params = list((p for group in self.optimizer.param_groups for p in group["params"]))\n'


def test_other_apex_names_are_still_xla807s():
    found = codes("import torch\nfrom apex import amp\nwith amp.disable_casts():\n    pass\nh = amp.init()\n")
    assert found == ["XLA807", "XLA807"]
