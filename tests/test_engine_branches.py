"""Branches the fixes made the same become one and blocks they emptied go
(migrate_xla/engine/branches.py), where nothing would be lost; a device count guarding
DataParallel stays off on XLA (XLA610)."""

from __future__ import annotations

import pytest

from conftest import migrate
from migrate_xla.app.run import migrate_code, options_for


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
