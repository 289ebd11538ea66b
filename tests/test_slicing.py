"""Slices (migrate_xla/engine/slicing.py): a big file is parsed without the units no woken rule
needs, and the result must be exactly the whole file's."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from conftest import FIXTURES
from migrate_xla.app.run import enabled_rules, migrate_code, options_for
from migrate_xla.engine import pipeline, prefilter, slicing
from migrate_xla.rule.api import FileContext, WholeModuleNeeded
from migrate_xla.sources.reading import read_source

CUDA = (re.compile(r"cuda"),)


@pytest.fixture
def always_slice(monkeypatch):
    """Slice every file, however small; count the slices the engine used."""
    monkeypatch.setattr(pipeline, "SLICE_FROM", 0)
    used = []
    migrate = pipeline._migrate

    def spy(text, piece, *args):
        used.append(piece is not None)
        return migrate(text, piece, *args)

    monkeypatch.setattr(pipeline, "_migrate", spy)
    return used


def whole(text: str, options) -> tuple[str, list]:
    saved, pipeline.SLICE_FROM = pipeline.SLICE_FROM, 10**12
    try:
        return migrate_code(text, options)
    finally:
        pipeline.SLICE_FROM = saved


FIXTURE_FILES = sorted(FIXTURES.glob("*/*.py"))


def test_slices_change_nothing_on_the_fixtures(always_slice):
    """Every fixture, safe and unsafe, migrates to the same code and findings sliced as whole.
    The fixtures hold the cross-statement cases the rules know (device variables, loaders
    bound in one method and looped over in another, events used far from where they were
    made, aliases), so a rule that learns from code a slice leaves out shows up here."""
    sliced = 0
    for path in FIXTURE_FILES:
        text = read_source(path).text
        for unsafe in (False, True):
            options = options_for(unsafe_fixes=unsafe)
            always_slice.clear()
            result = migrate_code(text, options)
            sliced += bool(always_slice) and all(always_slice)  # no pass fell back to the whole file
            assert result == whole(text, options), f"{path.relative_to(FIXTURES)} unsafe={unsafe}"
    assert sliced > 100  # most fixtures really were migrated from a slice


def sliced(code: str, keep=CUDA) -> slicing.Slice:
    piece = slicing.slice_text(textwrap.dedent(code), keep)
    assert piece is not None
    return piece


def test_a_slice_keeps_what_the_patterns_name_and_splices_back():
    code = textwrap.dedent(
        '''\
        """Docstring."""
        import torch


        def plain(x):
            return x + 1


        @decorator
        def on_gpu(x):
            return x.cuda()


        class Model:
            """A class whose methods are units too."""

            def forward(self, x):
                return x

            def move(self):
                self.to("cuda")

            # trailing comment of the class
        '''
    )
    piece = sliced(code)
    assert piece.text == textwrap.dedent(
        '''\
        """Docstring."""
        import torch


        __xla_migrate_skipped_0__


        @decorator
        def on_gpu(x):
            return x.cuda()


        class Model:
            __xla_migrate_skipped_1__

            def move(self):
                self.to("cuda")

            # trailing comment of the class
        '''
    )
    assert piece.splice(piece.text) == code
    assert cst.parse_module(piece.text).code == piece.text
    # lines after a placeholder are the file's lines
    assert [piece.line(n) for n in (1, 5, 9, 13, 16, 17)] == [1, 5, 10, 14, 20, 21]


def test_comments_stay_with_the_statement_libcst_gives_them_to():
    """Comments indented deeper than a skipped block are its block's (LibCST's footer):
    they go with it, so the next statement's leading lines are the same as in the file."""
    code = textwrap.dedent(
        """\
        def skipped():
            x = 1

            # deeper: the block's

        # the next statement's
        y = "cuda"
        """
    )
    piece = sliced(code)
    assert piece.text.startswith("__xla_migrate_skipped_0__\n\n# the next statement's\n")
    in_slice = cst.parse_module(piece.text).body[-1].leading_lines
    in_file = cst.parse_module(code).body[-1].leading_lines
    assert [line.comment and line.comment.value for line in in_slice] == [
        line.comment and line.comment.value for line in in_file
    ]


@pytest.mark.parametrize(
    "code",
    [
        "a = 1; b = 2\nc = 'cuda'\n",  # statements sharing a line are one unit
        "x = 1\r\ny = 'cuda'\r\nz = 3\r\n",  # CRLF
        "class A:\n\tdef f(self):\n\t\treturn 1\n\tdef g(self):\n\t\treturn 'cuda'\n",  # tabs
        "if x: y = 1\n# comment\n    # indented comment\nz = 'cuda'\n",  # a one-line block has no footer
        "def f():\n    return 1\nw = 'cuda'",  # no newline at the end
    ],
)
def test_slices_round_trip(code):
    piece = slicing.slice_text(code, CUDA)
    assert piece is not None and piece.skipped
    assert piece.splice(piece.text) == code
    assert cst.parse_module(piece.text).code == piece.text


@pytest.mark.parametrize(
    "code",
    [
        "def f(:\n    pass\n",  # ast cannot read it: the whole file's own error is reported
        "x = 1\ry = 'cuda'\n",  # a lone carriage return
    ],
)
def test_no_slice_when_unsure(code):
    piece = slicing.slice_text(code, CUDA)
    assert piece is None or not piece.skipped


def test_a_moved_placeholder_falls_back_to_the_whole_file():
    piece = sliced("def f():\n    pass\nx = 'cuda'\n")
    with pytest.raises(pipeline.WholeModuleNeeded):
        piece.splice("with a:\n    __xla_migrate_skipped_0__\nx = 'cuda'\n")
    with pytest.raises(pipeline.WholeModuleNeeded):
        piece.splice("x = 'cuda'\n")


def test_a_rule_needs_the_whole_file_only_for_names_the_left_out_code_spells():
    ctx = FileContext(left_out="def unrelated():\n    return start_time\n")
    ctx.need_whole_module("start")  # spelled only inside a longer word: the slice has all of it
    with pytest.raises(WholeModuleNeeded):
        ctx.need_whole_module("start_time")
    with pytest.raises(WholeModuleNeeded):
        ctx.need_whole_module()
    FileContext().need_whole_module("start_time")  # the whole file was parsed
    ctx.need_whole_module("start_time", defined=True)  # used, not defined
    with pytest.raises(WholeModuleNeeded):
        FileContext(left_out="async def unrelated():\n    pass\n").need_whole_module("unrelated", defined=True)


SLICED_CASES = {
    "imports in a skipped function are learned in place": """\
        def setup():
            import torch as t
            return 1


        def sync():
            t.cuda.synchronize()
        """,
    "a one-line import in a skipped function is learned too": """\
        def setup():
            if True: import torch as t
            return 1


        def sync():
            t.cuda.synchronize()
        """,
    "a name bound by an import the patterns name keeps its users": """\
        import torch
        from torch.cuda import Stream as S


        def unrelated():
            return 1


        def user():
            return S()
        """,
    "a finding after a skipped unit is on the file's line": """\
        import torch


        def unrelated():
            a = 1
            b = 2
            return a + b


        def user(x):
            torch.cuda.synchronize()
            return x.cuda()
        """,
    "a rule that wraps statements around a skipped one": """\
        import torch


        torch.cuda.nvtx.range_push("step")


        def unrelated():
            return 1


        torch.cuda.nvtx.range_pop()
        """,
    "an event used in another method": """\
        import torch


        class Timer:
            def __init__(self):
                self.start = torch.cuda.Event(enable_timing=True)

            def tick(self):
                self.start.record()
        """,
    "an event in a module-level name, used in a skipped unit": """\
        import torch

        start = torch.cuda.Event(enable_timing=True)


        def unrelated():
            return 1


        def later():
            return start
        """,
    "a mask name whose positions a skipped unit assigns": """\
        import torch

        device = "cuda"
        keep_mask = torch.randperm(10)


        def unrelated():
            return 1


        def train_step(x):
            return x[keep_mask].sum()
        """,
    "a one-line loop that fills a tensor opens its unit": """\
        import torch

        device = torch.device("cuda")
        X = torch.zeros(8, 2).to(device)
        for i in range(8): X[i] = torch.tensor((i, -i))


        def unrelated(mask: Optional[Tensor] = None):
            return mask
        """,
    "a CUDA import used only out of the patterns' reach": """\
        import torch
        from torch import cuda as gpu

        x = torch.ones(2).cuda()


        def unrelated():
            return 1


        def later():
            return gpu
        """,
    "a sparse tensor's method read where no sparse API is named": """\
        import torch

        adj = torch.sparse_coo_tensor(index, weight, (n, n)).cuda()


        def unrelated():
            return 1


        def edges(a):
            return a._indices()
        """,
    "an import a fix frees is kept while a skipped unit still uses it": """\
        import torch


        def unrelated():
            return torch.zeros(1)


        torch.cuda.synchronize()
        """,
}


@pytest.mark.parametrize("name", SLICED_CASES)
def test_sliced_migrations_equal_whole_ones(always_slice, name):
    text = textwrap.dedent(SLICED_CASES[name])
    piece = pipeline._slice(text, prefilter.woken(enabled_rules(options_for()), text), options_for())
    assert piece is not None and piece.skipped  # the case really leaves something out
    for unsafe in (False, True):
        options = options_for(unsafe_fixes=unsafe)
        assert migrate_code(text, options) == whole(text, options)
    if "learned" in name:
        assert "xla" in migrate_code(text, options_for())[0]  # the alias was seen: the call was converted
    if "one-line loop" in name:
        assert "X = X.to(device)" in migrate_code(text, options_for())[0]  # XLA205 saw the loop's write
    if "sparse" in name:
        assert "`a._indices()` reads a sparse tensor" in migrate_code(text, options_for())[0]  # XLA902 flags it
    if "reach" in name:
        assert "from torch import cuda as gpu" in migrate_code(text, options_for())[0]  # XLA114 saw the use
    if "frees" in name:
        assert "import torch\n" in migrate_code(text, options_for())[0]


def test_a_rule_that_will_need_the_whole_file_says_so_from_the_text():
    """XLA110's plan needs every statement: a file whose text may need one is not sliced (its
    slice would be parsed and given up), one that names no legacy type is."""
    filler = "".join(f"def unrelated_{n}():\n    return {n}\n\n\n" for n in range(100))
    planned = (
        "import torch\n\nuse_cuda = torch.cuda.is_available()\n"
        + filler
        + "def train():\n    x = torch.cuda.FloatTensor(3)\n"
    )
    plain = "import torch\n\n" + filler + "def train(x):\n    return x.cuda()\n"
    settings = options_for()
    rules = enabled_rules(settings)
    assert pipeline._slice(planned, prefilter.woken(rules, planned), settings) is None
    assert pipeline._slice(plain, prefilter.woken(rules, plain), settings) is not None
