"""Focused tests of the engine and rule framework, where a snapshot would hide the point."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.engine import registry
from migrate_xla.rule import settings
from migrate_xla.rule.api import FileContext, Rule
from migrate_xla.rule.findings import MigrationError


def migrate(code: str, **options) -> str:
    return migrate_code(textwrap.dedent(code), options_for(**options))[0]


def codes(code: str, **options) -> list[str]:
    return [d.code for d in migrate_code(textwrap.dedent(code), options_for(**options))[1]]


@pytest.mark.parametrize(
    "imports, call",
    [
        ("import torch", "torch.cuda.synchronize()"),
        ("import torch as t", "t.cuda.synchronize()"),
        ("from torch import cuda", "cuda.synchronize()"),
        ("import torch.cuda as tc", "tc.synchronize()"),
        ("from torch.cuda import synchronize", "synchronize()"),
        ("from torch.cuda import synchronize as sync_gpu", "sync_gpu()"),
    ],
)
def test_aliases_are_seen_through(imports, call):
    migrated = migrate(f"{imports}\n{call}\n")
    assert "torch_xla.sync(wait=True)" in migrated
    assert "synchronize" not in migrated.split("\n", 2)[-1]


def test_unimported_names_are_not_guessed():
    # `torch` here is a local object, not the torch module: nothing refers to torch.cuda.
    assert migrate("torch = load_plugin()\ntorch.cuda.synchronize()\n").count("TODO") == 0
    assert codes("torch = load_plugin()\ntorch.cuda.synchronize()\n") == []


def test_context_resolves_qualified_names():
    ctx = FileContext()
    for line in ["import torch.nn as nn", "from torch.cuda import amp", "import torch.distributed"]:
        ctx.learn_import(cst.parse_statement(line).body[0])
    assert ctx.qualname(cst.parse_expression("nn.Linear")) == "torch.nn.Linear"
    assert ctx.qualname(cst.parse_expression("amp.autocast")) == "torch.cuda.amp.autocast"
    assert ctx.qualname(cst.parse_expression("torch.distributed.barrier")) == "torch.distributed.barrier"
    assert ctx.qualname(cst.parse_expression("other.thing")) is None
    assert ctx.qualname(cst.parse_expression("f().cuda")) is None


def test_formatting_outside_rewritten_nodes_is_kept_byte_for_byte():
    source = textwrap.dedent(
        """\
        import torch  # the framework


        def  odd_spacing( a ,b ):   # keep
            return a+b  ;  # keep too

        x = torch.ones(2) .cuda()   # trailing comment
        y = {'a' : 1,
             'b' : 2}
        """
    )
    migrated = migrate(source)
    assert migrated.replace("import torch_xla\n", "", 1) == source.replace(".cuda()", ".to(torch_xla.device())")


def test_the_comments_directly_above_a_removed_statement_go_with_it_and_others_stay():
    # as a removed statement's own trailing comment does; a comment with a blank line under
    # it (a section's) is not about the statement, and moves down to the next one
    migrated = migrate(
        """\
        import torch
        print(torch.__version__)
        def setup():
            # speed up convolutions
            torch.backends.cudnn.benchmark = True
            # free memory
            torch.cuda.empty_cache()  # between runs
        # -- data --

        # the cache, again
        # (twice)
        torch.cuda.empty_cache()
        x = 1; torch.cuda.empty_cache()
        """
    )
    assert migrated == textwrap.dedent(
        """\
        import torch
        print(torch.__version__)
        def setup():
            pass
        # -- data --

        x = 1
        """
    )


def test_a_removed_first_import_leaves_the_blank_line_under_the_docstring():
    migrated = migrate(
        """\
        \"\"\"A script.\"\"\"

        from torch.cuda.amp import autocast
        import numpy as np

        with autocast():
            y = np.ones(1)
        """
    )
    assert migrated.startswith('"""A script."""\n\nimport numpy as np\n')


def test_the_comments_directly_above_a_removed_import_go_with_it():
    migrated = migrate(
        """\
        import torch
        # mixed precision
        from torch.cuda.amp import autocast
        # -- data --

        from torch.cuda import amp
        import numpy as np

        with autocast():
            y = np.ones(1)
        with amp.autocast():
            y = np.ones(1)
        """
    )
    assert migrated.startswith("import torch\n# -- data --\nimport numpy as np\n")


def test_todo_comment_is_written_once():
    # two CUDA APIs no rule converts, on one line: one comment (XLA899, the catch-all)
    source = "import torch\nf = torch.cuda.jiterator._create_jit_fn(a); g = torch.cuda.jiterator._create_jit_fn(b)\n"
    once = migrate(source)
    assert once.count("TODO(xla-migrate): XLA899") == 1
    assert migrate(once) == once
    # the finding is still reported on the second run: the CUDA call is still there
    assert codes(once) == ["XLA899"]


def test_imports_are_added_once_and_after_existing_imports():
    migrated = migrate(
        """\
        \"\"\"Docstring.\"\"\"
        from __future__ import annotations
        import torch
        a = torch.ones(1).cuda()
        b = torch.ones(1).cuda()
        """
    )
    assert migrated.count("import torch_xla\n") == 1
    assert migrated.index("import torch\n") < migrated.index("import torch_xla\n") < migrated.index("a = ")


def test_files_without_triggers_are_not_parsed(monkeypatch):
    def no_parse(*args, **kwargs):
        raise AssertionError("parsed a file with no trigger")

    monkeypatch.setattr(cst, "parse_module", no_parse)
    assert migrate_code("import os\nprint(os.getcwd())\n", options_for()) == (
        "import os\nprint(os.getcwd())\n",
        [],
    )


def test_the_fast_parse_makes_the_tree_libcst_makes():
    """tree.parse_module: the same tree as cst.parse_module, its node types' builders written
    as the parser first makes each (a second parse reuses them), and the ``libcst`` module's
    classes and checks back in place afterwards."""
    from conftest import FIXTURES
    from migrate_xla.rule import tree

    for path in sorted((FIXTURES / "examples").glob("*.py"))[:6] * 2:
        text = path.read_text(encoding="utf-8")
        fast, plain = tree.parse_module(text), cst.parse_module(text)
        assert fast.deep_equals(plain) and fast.code == text, path  # deep_equals compares types too
    assert all(getattr(cst, name) is cls for name, cls in tree._node_classes().items())
    assert cst.CSTNode.__post_init__ is tree._VALIDATE
    assert 0 < len(tree._MADE) < len(tree._node_classes())
    assert all(made is getattr(cst, name) or made.__name__ == "build" for name, made in tree._MADE.items())


def test_syntax_error_names_the_line():
    with pytest.raises(MigrationError, match=r"cannot parse: line 2"):
        migrate("import torch\ndef f(:\n    torch.cuda.synchronize()\n")


def test_output_that_does_not_compile_is_refused(monkeypatch):
    class Broken(Rule):
        CODE, NAME, FIX, TRIGGERS = "XLA198", "broken", "safe", ("cuda",)

        def leave_Name(self, original, updated):
            if original.value == "torch":
                return self.replace(original, updated, cst.Name("yield"), "bad")
            return updated

    from migrate_xla.app import run
    from migrate_xla.engine import prefilter
    from migrate_xla.generated import rule_index
    from migrate_xla.rule import settings

    monkeypatch.setattr(registry, "rules_of", lambda codes: (Broken,))
    monkeypatch.setattr(rule_index, "RULES", (tuple(prefilter.entry(Broken)),))
    caches = (prefilter.indexed, prefilter.enabled, settings._select)  # what read the real index
    for cached in caches:
        cached.cache_clear()
    try:
        with pytest.raises(MigrationError, match="does not compile"):
            migrate_code("import torch\nx = torch.cuda\n", run.Settings(select=("XLA198",)))
    finally:
        for cached in caches:
            cached.cache_clear()


def test_codes_are_unique_and_well_formed():
    rules = registry.all_rules()
    assert len({r.CODE for r in rules}) == len(rules)
    assert len({r.NAME for r in rules}) == len(rules)
    for rule in rules:
        assert rule.CODE[:3] == "XLA" and len(rule.CODE) == 6 and rule.CODE[3:].isdigit()
        assert rule.FIX in ("safe", "unsafe", None)
        assert rule.TRIGGERS, f"{rule.CODE} has no pre-filter trigger"
        assert rule.__doc__, f"{rule.CODE} has no docstring saying why"


def test_duplicate_codes_are_refused(monkeypatch, tmp_path):
    import codemods

    (tmp_path / "dup.py").write_text(
        "from migrate_xla.rule.api import Rule\n"
        "class Again(Rule):\n    CODE = 'XLA101'\n    NAME = 'again'\n    TRIGGERS = ('x',)\n"
    )
    monkeypatch.setattr(codemods, "__path__", [*codemods.__path__, str(tmp_path)])
    registry.all_rules.cache_clear()
    try:
        with pytest.raises(registry.RuleError, match="XLA101 is defined twice"):
            registry.all_rules()
    finally:
        registry.all_rules.cache_clear()


def test_selection_by_prefix():
    all_codes = [r.CODE for r in registry.all_rules()]
    assert settings.select(["XLA10"]) == tuple(c for c in all_codes if c.startswith("XLA10"))
    assert "XLA103" not in settings.select(None, ["XLA103"])
    assert settings.select(["xla101"]) == ("XLA101",)
    with pytest.raises(registry.RuleError, match="unknown rule code or prefix: XLA99"):
        settings.select(["XLA99"])


def test_select_narrows_what_is_rewritten():
    source = "import torch\nd = torch.device('cuda')\nx = x.cuda()\n"
    assert (
        migrate(source, select=["XLA103"])
        == "import torch\nimport torch_xla\nd = torch.device('cuda')\nx = x.to(torch_xla.device())\n"
    )


def test_blank_line_before_a_removed_statement_stays():
    assert migrate("import torch\nx = 1\n\ntorch.cuda.empty_cache()\nprint(x, torch)\n") == (
        "import torch\nx = 1\n\nprint(x, torch)\n"
    )


def test_imports_that_became_unused_are_removed():
    source = "import torch.cuda as tc\nimport torch.backends.cudnn as cudnn\ncudnn.benchmark = True\ntc.synchronize()\n"
    assert migrate(source) == "import torch_xla\ntorch_xla.sync(wait=True)\n"
    # still used elsewhere: kept
    kept = "from torch import cuda\ncuda.synchronize()\ns = cuda.Stream()\n"
    assert migrate(kept).startswith("from torch import cuda\nimport torch_xla\n")


def test_rewriter_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys; from migrate_xla.app.run import migrate_code, options_for;"
        "migrate_code('import torch\\nx = torch.ones(1).cuda()\\n', options_for());"
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- triggers: a rule's TRIGGERS and REQUIRES are necessary conditions for it to act ------
# Each case is code a rule acts on, spelled through an alias or an unusual but valid form
# its triggers must still see (they are built from the names the rule resolves, not from
# how scripts usually spell them); the rule's code must be among the findings.
@pytest.mark.parametrize(
    "code, rule",
    [
        ("from torch import cuda as c\ns = c.Stream()\n", "XLA801"),
        ("from torch.cuda import Event as E\ne = E()\n", "XLA802"),
        ("import torch.cuda.graphs as g\ngr = g.CUDAGraph()\n", "XLA803"),
        ("import torch.cuda.nvtx as nv\nnv.mark('x')\n", "XLA804"),
        ("from torch.autograd.profiler import emit_nvtx\nwith emit_nvtx():\n    pass\n", "XLA804"),
        ("import torch.cuda as tc\nx = tc.memory_allocated()\n", "XLA106"),
        ("from torch import accelerator as acc\nn = acc.device_count()\n", "XLA105"),
        ("from torch.backends import cudnn\ncudnn.benchmark = True\n", "XLA107"),
        ("from torch.backends import cudnn\nv = cudnn.version()\n", "XLA899"),
        ("from torch import device as D\nd = D('cuda:0')\n", "XLA101"),
        ("import triton.language as tl\nx = tl.arange(0, 4)\n", "XLA806"),
        # the XLA7xx rules act on files that run on an accelerator (rule.ON_ACCELERATOR)
        ("import torch_xla\nfrom torch import where as pick\nfor x in loader:\n    i = pick(x > 0)\n", "XLA702"),
        (
            "import torch_xla\ndef train_step(x, attn_Mask):\n    return x[\n        attn_Mask  # keep\n    ]\n",
            "XLA702",
        ),
        (
            "import torch_xla\nfrom torch import (\n    Tensor,\n    isnan as nan,\n)\nfor x in loader:\n    if nan(x):\n        break\n",
            "XLA703",
        ),
        ("import torch as t\nimport torch_xla\ndef fit(x):\n    assert not t.isinf(x)\n", "XLA703"),
        ("from torch.nn import functional as nnf\ny = nnf.celu(x)\n", "XLA901"),
        ("from torch.nn.modules.activation import SELU as Act\nm = Act()\n", "XLA901"),
        ("from torch import sparse as S\ny = S.mm(a, b)\n", "XLA902"),
        ("from torch import spmm as mul\ny = mul(a, b)\n", "XLA902"),
        ("import torch as t\nfrom torch.sparse import FloatTensor as F\nadj = F(i, v, (n, n))\n", "XLA902"),
        ("import torch_xla\nnet.share_memory()\n", "XLA611"),
        ("import torch\nfrom timm.utils.cuda import NativeScaler as NS\ns = NS()\ns(loss, opt)\n", "XLA407"),
        ("import torch\nimport timm.utils as tu\nsc = tu.ApexScaler()\n", "XLA811"),
        ("import torch\nfrom timm import data as td\nld = td.loader.PrefetchLoader(dl)\n", "XLA811"),
        ("import torch\nimport flash_attn.flash_attn_interface as fa\ny = fa.flash_attn_func(q, k, v)\n", "XLA811"),
        ("import torch\nimport lightning as Li\nt = Li.Trainer(precision='16-mixed')\n", "XLA821"),
        ("import lightning.pytorch as lp\nt = lp.Trainer(accelerator='gpu')\n", "XLA820"),
        ("from lightning import fabric as lf\nf = lf.Fabric(accelerator='cuda')\n", "XLA820"),
        ("import transformers as tf\na = tf.TrainingArguments('out', fp16=True)\n", "XLA824"),
        ("import accelerate as acc\na = acc.Accelerator(mixed_precision='fp16')\n", "XLA826"),
        # XLA111: a Hydra or OmegaConf config's device, the config known through an alias
        ("import torch\nimport hydra as h\n@h.main(config_path='c')\ndef run(c):\n    x.to(c.device)\n", "XLA111"),
        (
            "import torch\nfrom hydra import main as entry\n@entry(config_path='c')\ndef run(c):\n"
            "    t = torch.zeros(1, device=c.device)\n",
            "XLA111",
        ),
        ("import torch\nfrom omegaconf import DictConfig as DC\ndef run(c: DC):\n    x.to(c.device)\n", "XLA111"),
        ("import torch\nimport omegaconf as oc\nc = oc.OmegaConf.load('c.yaml')\nx.to(c.device)\n", "XLA111"),
        # XLA408: apex's amp under another name
        ("import torch\nfrom apex import amp as apex_amp\nclip(apex_amp.master_params(opt), 1.0)\n", "XLA408"),
        ("import torch\nimport apex.amp as A\nmodel, opt = A.initialize(model, opt, opt_level='O0')\n", "XLA408"),
        # XLA401: autocast prepared with functools.partial, either name aliased
        ("import torch\nimport functools as ft\nac = ft.partial(torch.autocast, device_type='cuda')\n", "XLA401"),
        (
            "import torch\nfrom functools import partial as p\nfrom torch import autocast as A\nac = p(A, 'cuda')\n",
            "XLA401",
        ),
    ],
)
def test_triggers_see_aliases(code, rule):
    assert rule in codes(code, unsafe_fixes=True)


def test_words_matches_whole_words_only():
    import re

    from migrate_xla.rule.api import names_trigger, words

    pattern = re.compile(words("cuda", "Stream"))
    assert [bool(pattern.search(t)) for t in ("torch.cuda", "x.cuda()", "'cuda:0'", "Stream()")] == [True] * 4
    assert [bool(pattern.search(t)) for t in ("is_cuda", "cudaMalloc", "use_cuda_graph", "MyStream")] == [False] * 4
    assert names_trigger("torch.cuda.Stream", "torch.cuda.streams.") == words("Stream", "streams")


def test_a_file_whose_triggers_lack_a_rules_requires_is_not_parsed():
    # XLA801's TRIGGERS (Stream) occur, its REQUIRES (cuda) does not, and no other rule
    # wakes: the file is skipped, so not even its syntax error is seen.
    assert migrate_code("s = Stream(\n", options_for(select=["XLA801"])) == ("s = Stream(\n", [])
    with pytest.raises(MigrationError, match="cannot parse"):
        migrate_code("s = torch.cuda.Stream(\n", options_for(select=["XLA801"]))


# -- files that run on the CPU (rule.ON_ACCELERATOR) ----------------------------------------
CPU_SCRIPT = """\
import torch
from torch.utils.data import DataLoader

device = torch.device("cpu")
model = torch.nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
for x, y in train_loader:
    loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    loss.backward()
    opt.step()
    print(loss.item())
with torch.no_grad():
    for x, y in val_batches:
        total = model(x.to(device)).sum()
torch.save(model.state_dict(), "model.pt")

if __name__ == "__main__":
    print("done")
"""


@pytest.mark.parametrize("target", ["single", "multiprocess", "spmd"])
def test_a_script_that_picks_the_cpu_and_names_no_accelerator_is_left_as_it_is(target):
    assert migrate_code(CPU_SCRIPT, options_for(unsafe_fixes=True, target=target)) == (CPU_SCRIPT, [])


@pytest.mark.parametrize(
    "where",
    ['device = torch.device("cuda")\n', "import torch_xla\n", "device = torch.accelerator.current_accelerator()\n"],
)
def test_a_script_that_names_cuda_xla_or_the_accelerator_is_migrated(where):
    found = set(codes(CPU_SCRIPT.replace('device = torch.device("cpu")\n', where), unsafe_fixes=True))
    assert {"XLA201", "XLA202", "XLA203", "XLA501", "XLA701"} <= found


def test_the_accelerator_test_does_not_see_names_that_only_contain_xla():
    import re

    from migrate_xla.rule.api import NAMES_ACCELERATOR, ON_ACCELERATOR

    names = re.compile(NAMES_ACCELERATOR)
    assert all(names.search(t) for t in ("x.cuda()", "use_cuda", "torch_xla.device()", "'xla'", "XLA_USE_BF16"))
    assert not any(
        names.search(t)
        for t in (
            "plt.xlabel('step')",
            "ax.set_xlim(0)",
            "accelerators",
            "'cpu'",
            "# TODO(xla-migrate): XLA608 ...",
            "import torch_xla.runtime as xr\nrank = xr.global_ordinal()",
        )
    )
    # a file that picks the CPU and names no accelerator is CPU-only; one that picks no device may serve a GPU script
    on_accelerator = re.compile(ON_ACCELERATOR)
    assert not any(on_accelerator.search(t) for t in ("device = 'cpu'\nplt.xlabel('step')", 'torch.device("cpu")'))
    assert all(
        on_accelerator.search(t) for t in ("def train(model, device):\n    model.to(device)", "d = 'cpu'\nx.cuda()")
    )


# -- branches the fixes made the same (migrate_xla/engine/branches.py) -----------------------------
@pytest.mark.parametrize(
    "code, expected",
    [
        (  # the last `elif` and the `else`
            "if args.cpu:\n    d = torch.device('cpu')\nelif args.gpu:\n    d = torch.device('cuda:0')\n"
            "else:\n    d = torch.device('cuda')\n",
            "if args.cpu:\n    d = torch.device('cpu')\nelse:\n    d = torch_xla.device()\n",
        ),
        (  # a whole chain
            "if args.distributed:\n    d = torch.device('cuda', rank)\nelif args.gpu:\n    d = torch.device('cuda:0')\n"
            "else:\n    d = torch.device('cuda')\n",
            "d = torch_xla.device()\n",
        ),
        (  # tests that only ask: the count the rules wrote, builtins, comparisons
            "if torch.cuda.device_count() > 1 and len(gpus) != 0:\n    d = torch.device('cuda:0')\n"
            "else:\n    d = torch.device('cuda')\n",
            "d = torch_xla.device()\n",
        ),
        ("d = torch.device(f'cuda:{r}') if ddp else torch.device('cuda')\n", "d = torch_xla.device()\n"),
        (  # branches that each lose their only statement go as a removed line does
            "x = 1\n# cuDNN\nif fast:\n    torch.backends.cudnn.benchmark = True\nelse:\n"
            "    torch.backends.cudnn.deterministic = True\ny = 2\n",
            "x = 1\ny = 2\n",
        ),
    ],
)
def test_branches_the_fixes_made_the_same_become_one(code, expected):
    migrated = migrate("import torch\n" + code)
    assert "".join(line for line in migrated.splitlines(True) if not line.startswith("import ")) == expected
    assert migrate(migrated) == migrated


@pytest.mark.parametrize(
    "code",
    [
        # the test does something: a call of the script's own, an assignment expression
        "if pick(args):\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cuda')\n",
        "if (n := count()) > 1:\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cuda')\n",
        # a comment would go with the `if`: in its test, on its line, on the `else` line, between the branches
        "if (args.gpu  # a GPU named\n        and ok):\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cuda')\n",
        "if args.gpu:  # the user's GPU\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cuda')\n",
        "if args.gpu:\n    d = torch.device('cuda:0')\nelse:  # every GPU\n    d = torch.device('cuda')\n",
        "if args.gpu:\n    d = torch.device('cuda:0')\n# otherwise\nelse:\n    d = torch.device('cuda')\n",
        # the branches still differ, in code or in comments
        "if args.gpu:\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cpu')\n",
        "if args.gpu:\n    # one GPU\n    d = torch.device('cuda:0')\nelse:\n    d = torch.device('cuda')\n",
        "d = (torch.device('cuda:0')  # one GPU\n     if args.gpu else torch.device('cuda'))\n",
    ],
)
def test_branches_are_kept_where_collapsing_them_would_lose_something(code):
    migrated = migrate("import torch\n" + code)
    assert "torch_xla.device()" in migrated and ("if " in migrated.replace("if __name__", ""))


@pytest.mark.parametrize(
    "code, expected",
    [
        ("if torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\nx = 1\n", "x = 1\n"),
        ("if torch.cuda.is_available(): torch.backends.cudnn.benchmark = True\nx = 1\n", "x = 1\n"),
        (  # an `if` emptied by its nested `if` going
            "if args.seed:\n    if torch.cuda.is_available():\n        torch.backends.cudnn.benchmark = True\nx = 1\n",
            "x = 1\n",
        ),
        (  # an emptied `else`, and a last `elif`, go whatever their test
            "if pick():\n    x = 1\nelse:\n    torch.backends.cudnn.benchmark = True\n",
            "if pick():\n    x = 1\n",
        ),
        (
            "if pick():\n    x = 1\nelif torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n",
            "if pick():\n    x = 1\n",
        ),
    ],
)
def test_blocks_the_fixes_emptied_go(code, expected):
    migrated = migrate("import torch\n" + code)
    assert "".join(line for line in migrated.splitlines(True) if not line.startswith("import ")) == expected
    assert migrate(migrated) == migrated


@pytest.mark.parametrize(
    "code",
    [
        "if pick():\n    torch.backends.cudnn.benchmark = True\n",  # the test may act
        "if torch.cuda.is_available():  # fast\n    torch.backends.cudnn.benchmark = True\n",
        "if torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\nelse:\n    print(1)\n",
        "if args.x:\n    y = 1\nelif torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n"
        "else:\n    y = 2\n",
        "for _ in range(3):\n    torch.cuda.empty_cache()\n",  # iterating acts
        "while ready():\n    torch.cuda.empty_cache()\n",
        "if args.x:\n    pass\n",  # the user's
    ],
)
def test_emptied_blocks_stay_where_removing_them_would_lose_something(code):
    migrated = migrate("import torch\n" + code)
    assert "pass\n" in migrated, migrated


def test_a_collapsed_branch_keeps_the_sync_of_the_loop_around_it():
    # XLA201 plans its sync by the positions of the loop body's statements
    migrated = migrate(
        """\
        import torch
        for x, y in batches:
            if args.gpu is not None:
                x = x.cuda(args.gpu, non_blocking=True)
                y = y.cuda(args.gpu, non_blocking=True)
            else:
                x = x.cuda(non_blocking=True)
                y = y.cuda(non_blocking=True)
            loss = model(x, y)
            loss.backward()
            optimizer.step()
        """
    )
    assert migrated.endswith(
        "for x, y in batches:\n"
        "    x = x.to(torch_xla.device(), non_blocking=True)\n"
        "    y = y.to(torch_xla.device(), non_blocking=True)\n"
        "    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n    torch_xla.sync()\n"
    )


def test_a_branch_moved_into_the_multiprocess_worker_is_collapsed_there():
    code = """\
        import torch
        if args.gpu is not None:
            device = torch.device("cuda:{}".format(args.gpu))
        else:
            device = torch.device("cuda")
        model = torch.nn.Linear(2, 2).to(device)
        if __name__ == "__main__":
            print(model)
        """
    migrated = migrate(code, target="multiprocess")
    assert "def _mp_fn(index):" in migrated and "    device = torch_xla.device()\n    model" in migrated
    assert "if args.gpu" not in migrated
    assert migrate(migrated, target="multiprocess") == migrated


# -- imports added after the environment a script sets before torch (migrate_xla/engine/imports.py) --
@pytest.mark.parametrize(
    "set_up",
    [
        'import os\nos.environ["XLA_FLAGS"] = "--xla_dump_to=/tmp/x"\n',
        'import os\nos.environ.setdefault("PJRT_DEVICE", "TPU")\n',
        'import os\nos.environ.update(XLA_FLAGS="--xla_dump_to=/tmp/x")\n',
        'import os\nos.putenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")\n',
        'import os as _os\nimport sys\nsys.path.insert(0, ".")\n_os.environ["XLA_FLAGS"] = "-x"\n',
        'from os import environ\nif "XLA_FLAGS" not in environ:\n    environ["XLA_FLAGS"] = "-x"\n',
        'import os\ndel os.environ["XLA_FLAGS"]\n',
    ],
)
def test_added_imports_go_after_the_environment_set_before_the_first_torch_import(set_up):
    """torch_xla reads XLA_FLAGS and the runtime's variables when it is imported: imported
    above the lines that set them, it never sees them."""
    migrated = migrate(set_up + "import torch\nimport numpy as np\n\nx = torch.ones(1).cuda()\n")
    assert migrated.startswith(set_up + "import torch\nimport numpy as np\nimport torch_xla\n"), migrated
    assert migrate(migrated) == migrated


def test_imports_stay_with_the_leading_imports_when_torch_is_one_of_them():
    code = 'import os\nimport torch\n\nos.environ["X"] = "1"\nx = torch.ones(1).cuda()\n'
    assert migrate(code).startswith("import os\nimport torch\nimport torch_xla\n\nos.environ")
    code = '"""Doc."""\nimport os\nimport torch\nx = torch.ones(1).cuda()\n'
    assert migrate(code).startswith('"""Doc."""\nimport os\nimport torch\nimport torch_xla\nx = ')


# -- DataParallel guards (XLA610) -------------------------------------------------------------
@pytest.mark.parametrize(
    "count, guard",
    [
        ("", "torch.cuda.device_count() > 1"),
        ("n_gpu = torch.cuda.device_count()\n", "n_gpu > 1"),
        ("import torch.cuda as tc\nngpus = tc.device_count()\n", "ngpus >= 2"),
        ("", "torch.accelerator.device_count() > 1"),
    ],
)
def test_a_device_count_guarding_data_parallel_stays_off_on_xla(count, guard):
    """On a host with several XLA devices the model would be wrapped without being replicated,
    its state_dict keys prefixed `module.`: the guard becomes False, with a TODO that says why."""
    code = f"import torch\nimport torch.nn.parallel as par\n{count}if {guard}:\n    model = par.DataParallel(model)\n"
    migrated, found = migrate_code(code, options_for())
    assert "if False:\n    model = par.DataParallel(model)\n" in migrated
    assert "# TODO(xla-migrate): XLA610" in migrated and "torch_xla.launch" in migrated
    assert [d.code for d in found if not d.fixed] == ["XLA610"]
    assert migrate(migrated) == migrated


def test_a_fix_held_back_is_marked_in_the_code_and_applied_with_unsafe_fixes():
    source = """\
    import torch

    model = torch.compile(model)
    adj = torch.sparse_coo_tensor(index, weight, (n, n))
    """
    held = migrate(source)  # XLA810's fix is safe (applied): torch.compile goes on XLA
    assert "# TODO(xla-migrate): XLA902" in held and "XLA810" not in held and "torch.compile" not in held
    assert "(n, n))\n" in held
    assert migrate(held) == held
    fixed = migrate(source, unsafe_fixes=True)
    assert "TODO(xla-migrate)" not in fixed and "(n, n)).to_dense()" in fixed


def test_what_cannot_be_converted_is_marked_rather_than_a_fix_held_back_on_its_statement():
    # XLA902 holds back `torch.sparse.sum` -> `torch.sum` (unsafe, marked); XLA703 flags the `if` on a tensor value
    source = """\
        import torch

        for x in loader:
            loss = model(x.cuda())
            loss.backward()
            optimizer.step()
            {}torch.sparse.sum(loss).item(){}
        """
    migrated = migrate(source.format("if ", " > 10:\n                break"))
    assert "TODO(xla-migrate): XLA703" in migrated and "TODO(xla-migrate): XLA902" not in migrated
    assert "TODO(xla-migrate): XLA902" in migrate(source.format("total += ", ""))
