"""verify of models under ``torch.compile``: the reference runs compiled code eagerly, the default
migration drops torch.compile (XLA810), a model kept on inductor is an error naming XLA810, and
one re-backed with openxla compiles under the instrumentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.verify import Settings, verify

COMPILED_GPT = FIXTURES / "examples" / "compiled_gpt.py"
COMPILED_FORMS = FIXTURES / "examples" / "compiled_forms.py"


def compile_line(script: Path) -> int:
    """The line of ``script`` that compiles its model."""
    return next(n for n, text in enumerate(script.read_text().splitlines(), 1) if "= torch.compile(" in text)


def compiled_gpt_copy(tmp_path: Path, old: str, new: str) -> Path:
    """compiled_gpt.py with ``old`` written as ``new``, in ``tmp_path``."""
    text = COMPILED_GPT.read_text()
    assert old in text, old
    script = tmp_path / COMPILED_GPT.name
    script.write_text(text.replace(old, new, 1))
    return script


@pytest.mark.slow
def test_a_model_compiled_on_inductor_is_dropped_by_default_and_trains_the_same(tmp_path, monkeypatch):
    """Issue 30 item 2: a nanoGPT-style `model = torch.compile(model)` crashed both runs in Dynamo
    under verify's forward hook; the reference now runs compiled code eagerly. Issue 40: the
    default migration drops torch.compile (XLA810, safe; inductor cannot compile for XLA and the
    lazy tensor compiles the step anyway), so the migrated run trains the same, one graph a step."""
    monkeypatch.chdir(tmp_path)
    result = verify(COMPILED_GPT, [], Settings(steps=4))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.tolerance_source.startswith("float64")
    assert result.migrated.compiled == []  # no torch.compile left in the migration
    assert result.migrated.compilations <= 3 and result.migrated.recompilations == 0
    assert result.reference.parameters == result.migrated.parameters
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]  # what the reference made of it
    assert "the reference ran it eagerly" in note.message and "migrated" not in note.message
    assert not note.blocking
    assert result.reference.compiled == [
        {
            "file": str(COMPILED_GPT),
            "line": compile_line(COMPILED_GPT),
            "backend": "inductor",
            "ran": "eagerly",
            "why": "inductor's CPU code is not what a GPU runs; torch.compile keeps the eager result",
        }
    ]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ignored", "backend-unknown"])
def test_a_model_left_on_inductor_is_an_error_naming_xla810_at_its_torch_compile_line(tmp_path, monkeypatch, how):
    """Where XLA810's fix does not apply (`--ignore XLA810`, or a backend the migration cannot
    read: a name), inductor fails on XLA tensors as it does without verify, and the report names
    XLA810 at the torch.compile line."""
    monkeypatch.chdir(tmp_path)
    if how == "ignored":
        script, settings = COMPILED_GPT, Settings(steps=4, ignore=("XLA810",))
    else:
        script = compiled_gpt_copy(tmp_path, "torch.compile(model)", "torch.compile(model, backend=BACKEND)")
        script.write_text(
            script.read_text().replace("\nimport argparse\n", '\nimport argparse\n\nBACKEND = "inductor"\n')
        )
        settings = Settings(steps=4)
    result = verify(script, [], settings)
    assert result.verdict == "error"
    assert len(result.reference.losses) == 4 and not result.reference.error, result.reference.stderr_tail
    assert "already tracked for mutation" not in result.reference.stderr_tail + result.migrated.stderr_tail
    crash = next(f for f in result.diagnosis if f.kind == "crash")
    assert crash.rule == "XLA810", crash.message
    assert (Path(crash.file).name, crash.line) == (COMPILED_GPT.name, compile_line(script)), crash.message
    assert "inductor" in crash.message
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]  # what the reference made of it
    assert "the reference ran it eagerly" in note.message and "migrated" not in note.message
    assert result.reference.compiled[0]["ran"] == "eagerly"


@pytest.mark.slow
@pytest.mark.parametrize("dropout", ["0.0", "0.1"])
def test_a_model_compiled_with_openxla_runs_dynamo_under_verify_and_matches(tmp_path, monkeypatch, dropout):
    """A script that reads torch.compile's wrapper (`model._orig_mod`) keeps it, re-backed with
    `backend="openxla"` (XLA810): the migrated run compiles with openxla for real, under the
    instrumentation (float64 mode traced, the forward hook a no-op while Dynamo traces); dropout
    masks are drawn eagerly at each call, outside the graphs, so both runs draw alike."""
    monkeypatch.chdir(tmp_path)
    script = compiled_gpt_copy(
        tmp_path,
        "    for it in range(args.iters):",
        "    raw_model = model._orig_mod if args.compile else model\n\n    for it in range(args.iters):",
    )
    code, _ = migrate_code(script.read_text(), options_for())
    assert 'torch.compile(model, backend="openxla")' in code
    result = verify(script, ["--dropout", dropout], Settings(steps=4))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.tolerance_source.startswith("float64")
    [site] = result.migrated.compiled
    assert (Path(site["file"]).name, site["line"], site["backend"], site["ran"]) == (
        COMPILED_GPT.name,
        compile_line(script),
        "openxla",
        "compiled",
    )
    assert result.reference.compiled[0]["ran"] == "eagerly"
    # the models as the script built them, not torch.compile's wrapper or the compiler's graphs
    assert result.reference.parameters == result.migrated.parameters
    assert result.migrated.parameters["models"] == ["GPT"]
    assert result.migrated.compilations  # XLA compiled what Dynamo handed it
    [note] = [f for f in result.diagnosis if f.kind == "compiled"]
    assert "the reference ran it eagerly" in note.message and "compiled it with openxla" in note.message
    assert not note.blocking


@pytest.mark.slow
@pytest.mark.parametrize("form", ["method", "decorator", "loss", "max-autotune", "dynamic"])
def test_every_form_of_torch_compile_is_dropped_by_default_and_trains_the_same(tmp_path, monkeypatch, form):
    """Issue 40: `model.compile()`, a `@torch.compile` function, a compiled loss function, a GPU
    tuning mode and `dynamic=True` all go by default (XLA810), and the migrated run matches with
    the step's graphs compiled once (docs/decisions.md, "torch.compile on XLA")."""
    monkeypatch.chdir(tmp_path)
    result = verify(COMPILED_FORMS, ["--form", form, "--dropout", "0.1"], Settings(steps=6))
    assert result.verdict == "match", result.message + result.migrated.stderr_tail
    assert result.migrated.compiled == []
    assert result.migrated.compilations <= 3 and result.migrated.recompilations == 0
