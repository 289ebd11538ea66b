"""The pre-filter's index (migrate_xla/generated/rule_index.py): current, and enough for a run whose
files wake no rule, which then imports neither LibCST nor the rule modules."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from migrate_xla.engine import prefilter, registry
from migrate_xla.generators import make_index
from migrate_xla.rule import settings


def test_rule_index_is_current():
    written = make_index.INDEX.read_text(encoding="utf-8") if make_index.INDEX.exists() else ""
    assert written == make_index.index_text(registry.all_rules()), (
        "migrate_xla/generated/rule_index.py is out of date with the rules in codemods/ (a rule added or moved to "
        f"another module, or its TRIGGERS, REQUIRES, TARGETS or RUNTIMES changed); regenerate it: {make_index.REGENERATE}"
    )
    every = registry.all_rules()
    assert registry.rules_of(rule.CODE for rule in every) == every  # each from its own module, as the index says


def test_the_index_tells_each_pattern_as_the_pattern_itself_does():
    """The tests the index keeps for the rules' patterns, read back, are those read from each pattern."""
    indexed = prefilter._indexed_tests()
    patterns = {pattern for rule in registry.all_rules() for pattern in (*rule.TRIGGERS, *rule.REQUIRES)}
    assert set(indexed) == patterns
    assert all(indexed[pattern] == prefilter.tests_of(pattern) for pattern in patterns)


def test_a_stale_index_says_so(monkeypatch):
    """A rule the index places in a module that does not define it (moved since) is an
    error that says to regenerate the index, not a KeyError."""
    monkeypatch.setattr(registry, "_modules", lambda: {"XLA101": "codemods.checkpoints"})
    with pytest.raises(registry.RuleError, match="XLA101 is not defined in codemods.checkpoints.*regenerate"):
        registry.rules_of(["XLA101"])


def test_the_index_wakes_what_the_rules_wake():
    """The same rules, from the index or from the classes, on every fixture."""
    rules = registry.all_rules()
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        from_index = [rule.CODE for rule in prefilter.woken(prefilter.indexed(), text)]
        assert from_index == [rule.CODE for rule in prefilter.woken(rules, text)], path


EDGES = [
    "",
    "cuda",
    "xcuda",
    "cuda_",
    "_cuda",
    "cuda.x",
    "x.cuda()",
    "CUDA",
    "é cuda",
    "cudaé",
    "cuda\n",
    "(cuda)",
    "no_grad",
    "torch.no_gradient",
    "nvidia-smi",
    "init",
    "__init__",
    "cat",
    "concatenate",
    "torch.cat(x)",
    "device = 'cpu'",
    'device = "cpu"',
    "'cpu\"",
    "cpu",
    "os.environ['XLA_FLAGS']",
    "x = 'xla'",
    "]b",
    "CUDA and Cuda",
    "aa",
]


def test_patterns_tested_without_a_regex_answer_as_the_regex():
    """Each top-level alternative of a pattern is tested its cheapest way: words and
    literals looked up, a literal's absence too, and a regex tried only where a literal its
    matches start with occurs. The same answer as ``re.search``, on every rule's patterns,
    on the fixtures and on texts made to catch word boundaries, quotes and alternatives."""
    patterns = {p for rule in registry.all_rules() for p in (*rule.TRIGGERS, *rule.REQUIRES)}
    kinds = {(kind, bool(kind != "regex" or what[0] != ("",))) for p in patterns for kind, what in prefilter._tests(p)}
    assert {("words", True), ("text", True), ("absent", True), ("regex", True)} <= kinds
    texts = [*EDGES, *(path.read_text(encoding="utf-8") for path in sorted(FIXTURES.rglob("*.py")))]
    for pattern in sorted(patterns | set(MADE_UP)):
        rule = prefilter.Entry("X", (), (pattern,), ())
        for text in texts:
            assert bool(prefilter.triggered([rule], text)) == bool(re.search(pattern, text)), (pattern, text[:80])


# Patterns no rule has (yet), in the forms the pre-filter reads apart
MADE_UP = [
    r"x\.cuda|(?:init(?<!\winit)|cat(?<!\wcat))\b|[sS]ma\w",
    r"[\]a]b|[^c]uda|[a-c]at|a{2}|\(cuda\)|é\b",
    r"(?i)cuda|xla",
    r"(c)uda|\1",
    r"\A(?![\s\S]*['\"]cpu['\"])|XLA_",
    r"\A(?![\s\S]*cpu\b)",
]


# Runs the CLI in-process on argv[1:], then prints its exit code, its output and the
# heavy modules it imported.
IN_PROCESS = r"""
import contextlib, io, json, sys
from migrate_xla.app.cli import main
out, err = io.StringIO(), io.StringIO()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("libcst", "codemods", "torch") or m in ("migrate_xla.engine.pipeline", "migrate_xla.rule.api"))
pool = "concurrent.futures.process" in sys.modules
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "heavy": heavy, "pool": pool}))
"""


def run_in_process(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, *args], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


PLAIN = "import os\n\n\ndef add(a, b):\n    return a + b  # no GPU code at all\n"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_check_that_wakes_no_rule_imports_no_libcst(tmp_path, fmt):
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN, encoding="utf-8")
    other = tmp_path / "pkg" / "other.py"
    other.parent.mkdir()
    other.write_text("print('hello')\n", encoding="utf-8")
    for files, args in ((1, [str(plain)]), (2, ["-j", "1", str(plain), str(tmp_path / "pkg")])):
        result = run_in_process("--check", "--format", fmt, *args)
        assert result["heavy"] == [], result
        assert result["code"] == 0, result
        if fmt == "json":
            report = json.loads(result["out"])
            assert report["summary"]["files"] == files
            assert all(not f["changed"] and not f["diagnostics"] for f in report["files"])
        elif fmt != "sarif":
            assert result["out"] == ""


def test_many_files_that_wake_no_rule_start_no_pool(tmp_path):
    """-j 2 over files without GPU code (a pre-commit run on a many-core machine) forks no
    workers: the pool starts only when a file wakes a rule (run.migrate_files)."""
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(PLAIN, encoding="utf-8")
    result = run_in_process("--check", "-j", "2", str(tmp_path))
    assert (result["code"], result["heavy"], result["pool"]) == (0, [], False), result


def test_the_pool_starts_at_the_first_file_that_wakes_a_rule(tmp_path):
    """The file that wakes a rule is migrated before the pool starts, and the files after it
    in the pool: the same report as one process gives."""
    (tmp_path / "a_train.py").write_text((FIXTURES / "examples" / "mnist_cnn.py").read_text(encoding="utf-8"))
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(PLAIN if i % 2 else "import torch\nx = torch.ones(1).cuda()\n")
    two = run_in_process("--check", "--format", "json", "-j", "2", str(tmp_path))
    one = run_in_process("--check", "--format", "json", "-j", "1", str(tmp_path))
    assert two["pool"] and not one["pool"]
    assert two["out"] == one["out"] and json.loads(two["out"])["summary"]["changed"] == 3


def test_a_file_that_wakes_a_rule_still_gets_the_rules():
    result = run_in_process("--check", str(FIXTURES / "examples" / "mnist_cnn.py"))
    assert "libcst" in result["heavy"] and "migrate_xla.engine.pipeline" in result["heavy"]
    assert result["code"] == 1 and "XLA201" in result["out"]


def test_a_check_imports_only_the_rule_modules_of_the_rules_the_file_wakes(tmp_path):
    """A file that wakes one rule imports that rule's module and none of the other rule
    modules (registry.rules_of finds each rule's module in the index): a pre-commit run
    pays for the rules its files need, not for every family."""
    script = tmp_path / "train.py"
    script.write_text("import torch\n\nact = torch.nn.ELU()\n", encoding="utf-8")
    result = run_in_process("--check", str(script))
    assert result["code"] == 1 and "XLA901" in result["out"], result
    rule_modules = {rule.MODULE for rule in prefilter.indexed()}
    assert {m for m in result["heavy"] if m in rule_modules} == {"codemods.runtime_defects.elu_backward"}
    families = {m.split(".")[1] for m in result["heavy"] if m.startswith("codemods.")}
    assert families <= {"runtime_defects", "shared"}, families


# Code without a word of PyTorch or CUDA that rules matching calls by shape woke before the
# gate (prefilter.GATE), with what they made of it
NOT_GPU_CODE = {
    "json.load (XLA108)": "import json\n\n\ndef read(path):\n    with open(path) as f:\n        return json.load(f)\n",
    "a slice by the loop index (XLA705)": (
        "def common_prefix(s1, s2):\n    for i, c in enumerate(s1):\n        if c != s2[i]:\n"
        "            return s1[:i]\n    return s1\n"
    ),
    "a boolean mask in a loop (XLA702)": (
        "import numpy as np\n\n\ndef train(batches):\n    for x in batches:\n        kept = x[x > 0]\n"
        "        print(kept.sum())\n"
    ),
    "print under __main__ (XLA652, XLA659, XLA670)": (
        "def main():\n    for line in open('f'):\n        print(line)\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
}


@pytest.mark.parametrize("text", NOT_GPU_CODE.values(), ids=NOT_GPU_CODE.keys())
def test_a_file_that_names_no_torch_nor_cuda_wakes_no_rule(text):
    """Most files of a repository name neither torch nor CUDA: no rule acts on them, under
    any target or fix mode, and none is parsed; the rules' own triggers alone would wake some."""
    from migrate_xla.app import run

    for target in ("single", "multiprocess", "spmd"):
        for unsafe in (False, True):
            options = run.options_for(target=target, unsafe_fixes=unsafe)
            assert run.migrate_code(text, options) == (text, []), (target, unsafe)
            assert prefilter.woken(prefilter.enabled(options.codes, target), text) == []
    woken_without_gate = {
        target: prefilter.triggered(prefilter.enabled(settings.select(None, None), target), text)
        for target in ("single", "multiprocess")
    }
    assert any(woken_without_gate.values())


def test_a_check_of_a_plain_file_that_calls_json_load_imports_no_libcst(tmp_path):
    plain = tmp_path / "config.py"
    plain.write_text(NOT_GPU_CODE["json.load (XLA108)"], encoding="utf-8")
    result = run_in_process("--check", str(plain))
    assert (result["code"], result["out"], result["heavy"]) == (0, "", []), result


def test_the_gate_lets_through_every_file_a_rule_acts_on():
    """Every fixture and example a rule changes or reports names a word of the gate, and so
    does a training helper of a project that names no torch: it calls autograd."""
    from migrate_xla.app import run

    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not path.stem.endswith("_noop"):
            assert prefilter.gated(text), path
    helper = (
        "def train_epoch(model, loader, optimizer, device):\n    for x, y in loader:\n"
        "        loss = model(x.to(device), y.to(device))\n        loss.backward()\n        optimizer.step()\n"
    )
    migrated, found = run.migrate_code(helper, run.options_for())
    assert migrated.endswith("        optimizer.step()\n        torch_xla.sync()\n")
    assert [d.code for d in found] == ["XLA201"]


def test_no_trigger_starts_with_a_word_boundary():
    """A pattern that starts with ``\\b`` makes Python's ``re`` try every position of the file (the
    pre-filter reads every file): ``words()`` spells the same test after a literal (5 to 100
    times faster on torch's sources; XLA903-XLA905 and XLA613 had cost the CUDA-heavy corpus
    0.9 s of its 1.8 s pre-filter)."""
    from migrate_xla.engine.prefilter import patterns_of

    slow = {
        rule.CODE: pattern.pattern
        for rule in registry.all_rules()
        for patterns in patterns_of(rule)
        for pattern in patterns
        if pattern.pattern.startswith("\\b")
    }
    assert not slow, slow
