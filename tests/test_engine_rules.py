"""The rule framework around the rewrites: the registry's codes and rule selection, the
pre-filter's triggers and REQUIRES (files no rule can act on are not parsed), the parse and the
check that the output compiles, and files that run on the CPU left as they are."""

from __future__ import annotations

import libcst as cst
import pytest

from conftest import codes, migrate
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.engine import registry
from migrate_xla.rule import settings
from migrate_xla.rule.api import Rule
from migrate_xla.rule.findings import MigrationError


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
    assert all(getattr(cst, name) is cls for name, cls in tree.node_classes().items())
    assert cst.CSTNode.__post_init__ is tree._VALIDATE
    assert 0 < len(tree._MADE) < len(tree.node_classes())
    assert all(made is getattr(cst, name) or made.__name__ == "build" for name, made in tree._MADE.items())


def test_the_node_builders_are_written_ahead_for_the_installed_libcst(monkeypatch):
    """generated/node_builders.py is what make_node_builders writes for the installed LibCST, the
    parse takes its builders from there, and where a class no longer gives the code a builder was
    written from (another LibCST), it compiles its own: the same tree either way."""
    from migrate_xla.generated import node_builders
    from migrate_xla.generators import make_node_builders
    from migrate_xla.rule import tree

    assert make_node_builders.TABLE.read_text(encoding="utf-8") == make_node_builders.table_text(), (
        f"migrate_xla/generated/node_builders.py is stale for the installed LibCST: {make_node_builders.REGENERATE}"
    )
    name = tree._builder(cst.Name)
    assert name.__qualname__ == "_Name.<locals>.build"  # the written one, not compiled here
    monkeypatch.setitem(node_builders.BUILDERS, "Name", ("def build(): pass\n", node_builders.BUILDERS["Name"][1]))
    monkeypatch.setattr(tree, "_MADE", {})
    assert tree._builder(cst.Name).__qualname__ == "build"
    text = "import torch\nx = torch.ones(2).cuda()  # moved\n"
    assert tree.parse_module(text).deep_equals(cst.parse_module(text))


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
