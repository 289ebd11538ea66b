"""The shortcuts that keep the rules cheap on big files (benchmarks/README.md) answer as the
long way does: tighter triggers match where the rule can act, gates skip only files where
an analysis finds nothing, and unchanged nodes are handed back as they are."""

from __future__ import annotations

import gc
import inspect
import re
from pathlib import Path

import libcst as cst
import pytest

from codemods.amp.dtype_choices import AUTOCAST_CALL
from codemods.amp.float16 import Float16ToBfloat16
from codemods.cuda_only.reference_left import _NOT_SEARCHED
from codemods.lazy_execution.element_wise_read import _own_nodes
from codemods.recompilation.growing_shape import LOOP_INDEX_SLICE
from codemods.shared.launch_plan import LAUNCH_CALL
from migrate_xla.app import run
from migrate_xla.rule.api import FileContext, Settings, subtree, words
from migrate_xla.rule.findings import TARGETS, MigrationError


def test_float16_hands_back_unchanged_nodes():
    """XLA405's leave hooks return the very node they were given when nothing changes, so
    that a file without float16 to rewrite is not rebuilt (and not generated again)."""
    module = cst.parse_module(
        'x = {"dtype": "float32", "n": 1}\ny: int = 2\ndef f(a=1, *, b="fp32"):\n    pass\n'
        'parser.add_argument("--dtype", default="float32")\n'
    )
    ctx = FileContext(Settings(unsafe_fixes=True))
    rule = Float16ToBfloat16(ctx)
    rule.visit_Module(module)
    hooks = {
        cst.DictElement: rule.leave_DictElement,
        cst.Param: rule.leave_Param,
        cst.Assign: rule.leave_Assign,
        cst.AnnAssign: rule.leave_AnnAssign,
        cst.Call: rule.leave_Call,
    }
    seen = 0
    for node in subtree(module):
        if type(node) in hooks:
            seen += 1
            assert hooks[type(node)](node, node) is node
    assert seen == 7
    changed = cst.parse_module('x = {"dtype": "float16"}\n').body[0].body[0].value.elements[0]
    assert rule.leave_DictElement(changed, changed) is not changed


LOOP_COUNTER = words("range", "enumerate")
ANY_SLICE_AFTER = re.compile(LOOP_COUNTER + r"[\s\S]*?\[[^\]\n]*:")  # what LOOP_INDEX_SLICE is, the slow way


@pytest.mark.parametrize(
    "text, found",
    [
        ("for i in range(n):\n    y = x[:i]\n", True),
        ("for i, v in enumerate(xs):\n    a = b[i + 1 :]\n", True),
        ("for i in range(n):\n    y = x[i]\n    z = [w for w in y]\nq = x[1:]\n", True),
        ("y = x[1:]\nfor i in range(n):\n    pass\n", False),  # the slice before the loop
        ("for i in arange(n):\n    y = x[:i]\n", False),  # not range
        ("for i in range(n):\n    y = x[\n        :i]\n", False),  # no slice on one line (nor before)
        ("x = range(3)\nr = e[0]\nfor i in enumerate(z):\n  s = t[a(0):]\n", True),
        ("for i in range(n):\n    s = t[a[0]:]\n", False),  # `[a[0]` ends at its `]`: not the one-line slice either
        ("range enumerate range [ ] [x] [\n:]", False),
    ],
)
def test_loop_index_slice_trigger(text, found):
    assert bool(re.search(LOOP_INDEX_SLICE, text)) is found
    assert bool(ANY_SLICE_AFTER.search(text)) is found


def test_loop_index_slice_trigger_in_windows():
    """A slice searches each unit as ``pattern.search(text, start, stop)``: the same answers there."""
    text = (
        "a = x[1:]\nfor i in range(3):\n    b = [y for y in z]\n    c = w[i:]\n"
        "def f():\n    for j, v in enumerate(q):\n        r = e[0]\n    return s[:j]\n"
        "k = range(2)\nm = n[0]\n"
    )
    fast = re.compile(LOOP_INDEX_SLICE)
    for start in range(len(text)):
        for stop in range(start, len(text) + 1, 7):
            assert bool(fast.search(text, start, stop)) == bool(ANY_SLICE_AFTER.search(text, start, stop))


@pytest.mark.parametrize(
    "text",
    [
        "mp.spawn(train, nprocs=2)",
        "(xmp.spawn)(train)",
        "torch_xla.launch \\\n    (train)",
        "from torch.multiprocessing import spawn as sp",
        "from torch.multiprocessing import (\n    spawn  # the launcher\n    as sp,\n)",
    ],
)
def test_launch_call_seen(text):
    assert LAUNCH_CALL.search(text)


@pytest.mark.parametrize("text", ["# launch the job on 8 GPUs", "self.launched = True", "spawned = []", "x.spawn_id"])
def test_no_launch_call(text):
    assert not LAUNCH_CALL.search(text)


@pytest.mark.parametrize(
    "text, found",
    [
        ('with torch.autocast("cuda", dtype=dtype):', True),
        ("with autocast():", True),
        ("from torch.cuda.amp import autocast as ac", True),
        ("torch.is_autocast_enabled()", False),
        ("# autocast is off here", False),
        ("from torch.amp import autocast_mode", False),
    ],
)
def test_autocast_call(text, found):
    assert bool(AUTOCAST_CALL.search(text)) is found


def test_reference_search_skips_only_layout_and_statements():
    """XLA899's search skips nested statements and layout: no expression type among them."""
    assert not any(issubclass(kind, cst.BaseExpression) for kind in _NOT_SEARCHED)
    assert not any(issubclass(kind, (cst.Arg, cst.Element, cst.DictElement)) for kind in _NOT_SEARCHED)
    assert cst.SimpleStatementLine in _NOT_SEARCHED and cst.Comma in _NOT_SEARCHED


def test_function_walk_finds_every_def_in_order():
    """XLA204 finds the file's functions without entering expressions: the same defs, in order."""
    module = cst.parse_module(
        "def a():\n    def b():\n        pass\n    f = lambda: 1\n"
        "class C:\n    def d(self):\n        pass\n    if x:\n        def e():\n            pass\n"
        "try:\n    pass\nexcept E:\n    def g():\n        pass\nelse:\n    with w:\n        def h(): pass\n"
        "match v:\n    case 1:\n        def i():\n            pass\n"
    )
    slow = [n.name.value for n in subtree(module) if isinstance(n, cst.FunctionDef)]
    fast = [n.name.value for n in _own_nodes(module, scoped=False) if isinstance(n, cst.FunctionDef)]
    assert fast == slow == ["a", "b", "d", "e", "g", "h", "i"]


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("target", TARGETS)
def test_migration_leaves_no_cycle_holding_a_tree(target):
    """Files are migrated with the cyclic garbage collector off (run.py): a tree must be
    freed when its file is done. A cycle that reaches one (an object holding its own bound
    method, a nested function that calls itself) kept every tree of a run until the next
    collection, whose traversal of them cost a tenth of a run over torch's CUDA-heavy packages."""
    options = run.options_for(unsafe_fixes=True, target=target)
    files = sorted(FIXTURES.rglob("*.py")) if target == TARGETS[0] else sorted((FIXTURES / "targets").glob("*.py"))
    held: dict[str, str] = {}
    enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.freeze()  # what is alive now is never collected here: each collection scans only a file's objects
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for path in files:
            try:
                run.migrate_code(path.read_text(encoding="utf-8"), options, str(path))
            except MigrationError:
                pass  # the fixtures of files that cannot be migrated
            gc.collect()
            nodes = sum(isinstance(o, cst.CSTNode) for o in gc.garbage)
            if nodes:  # what the cycle is made of: our objects and nested functions among the garbage
                held[path.name] = f"{nodes} nodes, with " + ", ".join(sorted(set(map(_name, gc.garbage)) - {""}))
            gc.garbage.clear()
    finally:
        gc.set_debug(0)
        gc.unfreeze()
        if enabled:
            gc.enable()
    assert len(files) > 10
    assert not held, "\n".join(f"{name}: {what}" for name, what in list(held.items())[:3])


def _name(thing) -> str:
    """The name of one of our objects' classes or of a function; "" for anything else."""
    if inspect.isfunction(thing):
        return f"{thing.__qualname__}()"
    kind = type(thing)
    return kind.__qualname__ if kind.__module__.startswith(("codemods", "migrate_xla")) else ""
