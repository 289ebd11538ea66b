"""How the engine writes its rewrites, where a snapshot would hide the point: names seen through
import aliases, the formatting and comments around a rewrite kept, imports added (after the
environment a script sets before torch) and removed once unused, TODO comments and fixes held
back."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import codes, migrate
from migrate_xla.rule.api import FileContext


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
