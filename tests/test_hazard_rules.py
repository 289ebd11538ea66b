"""Focused tests of the recompilation-hazard (XLA7xx) and CUDA-only (XLA8xx) rules, where a
snapshot would hide the point: aliases, one comment a statement, the training-path guess,
held-back unsafe fixes, messages that quote code spread over several lines."""

from __future__ import annotations

import textwrap

import pytest

from conftest import migrate, migrate_with_findings
from migrate_xla.rule.api import TODO_PREFIX


def code_lines(migrated: str) -> str:
    """The migrated code without its comments (TODO messages quote APIs too)."""
    return "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))


def findings(code: str, **options) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in migrate_with_findings(code, **options)[1]]


@pytest.mark.parametrize(
    "imports, use",
    [
        ("import torch", "torch.cuda.Stream()"),
        ("import torch.cuda as tc", "tc.Stream()"),
        ("from torch import cuda", "cuda.Stream()"),
        ("from torch.cuda import Stream as CudaStream", "CudaStream()"),
    ],
)
def test_cuda_apis_are_found_through_aliases_and_their_objects_where_used(imports, use):
    code = f"{imports}\nside = {use}\nside.synchronize()\nprint(side.query())\n"
    assert findings(code, select=["XLA8"]) == [(2, "XLA801"), (3, "XLA801"), (4, "XLA801")]


@pytest.mark.parametrize(
    "imports, use",
    [
        ("import torch", "torch.cuda.Event(enable_timing=True)"),
        ("import torch.cuda as tc", "tc.Event(enable_timing=True)"),
        ("from torch import cuda", "cuda.Event(enable_timing=True)"),
        ("from torch.cuda import Event as CudaEvent", "CudaEvent(enable_timing=True)"),
    ],
)
def test_cuda_events_become_timing_events_through_every_alias_and_their_uses_stay(imports, use):
    code = f"{imports}\nstart = {use}\nstart.record()\nprint(start.elapsed_time(start))\n"
    migrated, diagnostics = migrate_with_findings(code, select=["XLA8"])
    assert [(d.line, d.code, d.fixed) for d in diagnostics] == [(2, "XLA802", True)]
    assert "start = XlaTimingEvent(enable_timing=True)\nstart.record()\n" in migrated
    assert "class XlaTimingEvent:" in migrated
    assert imports == "import torch" or imports not in migrated  # an import of torch.cuda went unused


def test_a_name_bound_to_something_else_is_forgotten():
    code = """\
        import time
        import torch
        start = torch.cuda.Event()
        start = time.perf_counter()
        print(start)
    """
    assert findings(code, select=["XLA8"]) == [(3, "XLA802")]


def test_attributes_keywords_and_parameters_named_like_an_api_are_not_references():
    code = """\
        from apex import amp
        config.amp = True
        build(amp=False)
        def scale(amp, factor):
            return factor * 2
    """
    assert findings(code, select=["XLA8"]) == []


def test_one_comment_a_statement_even_when_several_rules_flag_it():
    migrated, diagnostics = migrate_with_findings("import torch\ns = torch.cuda.Stream(); e = torch.cuda.Event()\n")
    assert migrated.count(TODO_PREFIX) == 1 and f"{TODO_PREFIX}XLA801" in migrated
    assert [d.code for d in diagnostics] == ["XLA801", "XLA802"]  # XLA899 does not repeat them
    assert migrate(migrated) == migrated


def test_catch_all_still_flags_what_no_specific_rule_covers():
    code = "import torch\ns = torch.cuda.Stream()\nf = torch.cuda.jiterator._create_jit_fn(src)\n"
    assert findings(code) == [(2, "XLA801"), (3, "XLA899")]


def test_nvtx_is_not_converted_where_xp_names_something_else():
    code = 'import cupy as xp\nimport torch\nwith torch.cuda.nvtx.range("fwd"):\n    y = f(x)\n'
    migrated, diagnostics = migrate_with_findings(code, select=["XLA804"])
    assert migrated.count(TODO_PREFIX) == 1 and "xp.Trace" not in code_lines(migrated)
    assert [(d.code, d.fixed) for d in diagnostics] == [("XLA804", False)]


def test_nvtx_uses_the_profiler_alias_already_imported():
    code = 'import torch\nimport torch_xla.debug.profiler as prof\nwith torch.cuda.nvtx.range("fwd"):\n    y = f(x)\n'
    migrated = migrate(code, select=["XLA804"])
    assert 'with prof.Trace("fwd"):' in migrated and " as xp" not in migrated


def test_nvtx_range_around_a_sync_is_flagged_not_converted():
    # torch_xla raises "Expecting scope to be empty" for a sync inside an xp.Trace
    code = """\
        import torch
        import torch_xla
        torch.cuda.nvtx.range_push("step")
        y = f(x)
        torch_xla.sync()
        torch.cuda.nvtx.range_pop()
    """
    migrated, diagnostics = migrate_with_findings(code, select=["XLA804"])
    assert "xp.Trace" not in code_lines(migrated)
    assert [(d.line, d.fixed) for d in diagnostics] == [(3, False), (6, False)]


def test_messages_quoting_code_over_several_lines_stay_on_one_line():
    code = """\
        import torch
        import torch_xla
        model = torch.compile(
            model,
            mode="max-autotune",
        )
        for x, mask in loader:
            y = x[
                mask
            ]
    """
    migrated, diagnostics = migrate_with_findings(code)
    compile(migrated, "<migrated>", "exec")
    assert {d.code for d in diagnostics} >= {"XLA702", "XLA810"}
    assert all("\n" not in d.message for d in diagnostics)
    assert "# TODO(xla-migrate): XLA702 `x[mask]` indexes" in migrated


def test_unsafe_fixes_are_held_back_by_default():
    code = """\
        import torch
        import torch_xla
        from torch.utils.data import DataLoader
        train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
        adj = torch.sparse_coo_tensor(index, weight, (n, n))
    """
    migrated, diagnostics = migrate_with_findings(code)
    # a hint leaves the code as it is; a fix held back whose code cannot run on XLA is marked
    todo = "# TODO(xla-migrate): XLA902 "
    assert migrated.replace(migrated[migrated.index(todo) : migrated.index("adj = ")], "") == textwrap.dedent(code)
    assert [(d.code, d.severity, d.fixed, d.fix) for d in diagnostics] == [
        ("XLA701", "warning", False, "unsafe"),
        ("XLA902", "warning", False, "unsafe"),
    ]
    fixed = migrate(code, unsafe_fixes=True)
    assert "shuffle=True, drop_last=True)" in fixed and "(n, n)).to_dense()" in fixed


@pytest.mark.parametrize(
    "code, line",
    [
        ("keep = x.nonzero()\n", None),  # set-up code runs once
        ("for x in loader:\n    keep = x.nonzero()\n", 4),
        ("def forward(self, x):\n    return x.nonzero()\n", 4),
        ("def train_step(x):\n    return x.nonzero()\n", 4),
        ("def helper(x):\n    return x.nonzero()\n", None),  # not seen: its callers are not known
        ("class D:\n    def __getitem__(self, i):\n        for t in self.items:\n            t.unique()\n", None),
        ("def collate(batch):\n    return [t.unique() for t in batch]\n", None),
        # a data set's or a sampler's code runs in the DataLoader's workers, its helpers too
        ("class Pairs(Dataset):\n    def pick(self, y):\n        for c in y:\n            (y == c).nonzero()\n", None),
        (
            "class Pairs(data.Dataset[int]):\n    def pick(self, y):\n        while True:\n            return y.unique()\n",
            None,
        ),
        ("class PairsDataset(Base):\n    def pick(self, y):\n        for c in y:\n            y.unique()\n", None),
        (
            "class Buckets(Sampler):\n    def batches(self, n):\n        for b in n:\n            yield b.nonzero()\n",
            None,
        ),
        # a model-side "sampler" (a diffusion model's DDIM sampler) runs the model
        ("class DDIMSampler:\n    def sample(self, x):\n        for t in x:\n            t.nonzero()\n", 6),
        ("class Net(nn.Module):\n    def forward(self, x):\n        return x.nonzero()\n", 5),
    ],
)
def test_data_dependent_shapes_are_flagged_in_the_training_path_only(code, line):
    expected = [(line, "XLA702")] if line is not None else []
    assert findings("import torch\nimport torch_xla\n" + code, select=["XLA702"]) == expected


def test_eval_loaders_keep_their_last_batch():
    code = """\
        import torch_xla
        from torch.utils.data import DataLoader
        val_loader = DataLoader(val_set, batch_size=8, shuffle=True)
        test_loader = DataLoader(train_set, batch_size=8)
        train_loader = DataLoader(train_set, batch_size=8)
    """
    assert findings(code, select=["XLA701"]) == [(5, "XLA701")]


@pytest.mark.parametrize(
    "loop",
    [
        "for _ in range(n):\n        x = torch.cat((x, model(x)[:, -1:]), dim=1)",
        "while x.size(1) < n:\n        x = t.concat([x, model(x)], 1)",
        "for _ in range(n):\n        x = cat((x, model(x)), dim=1)",
        "for _ in range(n):\n        self.cache = torch.cat((self.cache, model(x)))",
    ],
)
def test_a_tensor_concatenated_onto_itself_in_a_loop_is_flagged_however_imported(loop):
    code = f"import torch\nimport torch as t\nimport torch_xla\nfrom torch import cat\n\ndef sample(model, x, n):\n    {loop}\n    return x\n"
    assert {c for _, c in findings(code)} == {"XLA705"}  # a loop that feeds x to the model is also cut every token


@pytest.mark.parametrize(
    "body",
    [
        "outs = []\n    for x in loader:\n        outs.append(model(x))\n    return torch.cat(outs)",  # a list
        "for x in loader:\n        x = torch.cat((x, pad), dim=1)\n        model(x)",  # bound by the loop
        "for b in loader:\n        x = b\n        x = torch.cat((x, pad), dim=1)",  # fresh each iteration
        "for _ in range(n):\n        x = torch.cat((x, model(x)), dim=1)\n        x = x[:, 1:]",  # a window
        "for t in range(n):\n        y = model(x[:, t], x[:, t:t + 4])",  # fixed lengths
        "x = torch.cat((x, y), dim=1)",  # no loop
    ],
)
def test_shapes_that_stay_the_same_are_not_flagged(body):
    assert findings(f"import torch\nimport torch_xla\n\ndef run(model, loader, x, pad, n):\n    {body}\n") == []


def test_files_that_name_no_accelerator_are_not_looked_at():
    # a CPU-only script: the hazards cost nothing there (rule.ON_ACCELERATOR)
    code = """\
        import torch
        from torch.utils.data import DataLoader
        device = torch.device("cpu")
        train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
        for x, y in train_loader:
            if x.any():
                y = y[y > 0]
            seen = torch.cat((seen, x), dim=1)
    """
    assert findings(code, unsafe_fixes=True) == []
    on_gpu = textwrap.dedent(code).replace('"cpu"', '"cuda"')
    assert [c for _, c in findings(on_gpu, select=["XLA7"])] == ["XLA701", "XLA703", "XLA702", "XLA705"]


def test_data_side_code_is_not_flagged():
    code = """\
        import torch
        import torch_xla
        def collate_fn(batch):
            out = torch.empty(0)
            for i, x in enumerate(batch):
                out = torch.cat((out, x[:i + 1]))
            return out
    """
    assert findings(code) == []


def test_slices_bounded_by_the_loop_index_on_one_side_are_flagged():
    code = """\
        import torch
        import torch_xla
        def train(model, data):
            for t in range(1, 100):
                loss = model(data[:, :t + 1]).sum()
            for i, batch in enumerate(data):
                model(batch[i:])
    """
    assert findings(code) == [(5, "XLA705"), (7, "XLA705")]


def test_a_sampling_loop_that_crops_into_a_name_is_cut_after_the_crop_and_before_the_concatenation():
    migrated, diagnostics = migrate_with_findings(
        """\
        import torch
        import torch_xla
        def generate(model, idx, n, block_size):
            for _ in range(n):
                idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
                idx_next = model(idx_cond)[:, -1:].argmax(-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx
        """
    )
    [finding] = diagnostics
    assert finding.code == "XLA705" and finding.fixed
    body = [line.strip() for line in migrated.splitlines()[4:9]]
    assert body == [
        "idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]",
        "torch_xla.sync()",
        "idx_next = model(idx_cond)[:, -1:].argmax(-1)",
        "torch_xla.sync()",
        "idx = torch.cat((idx, idx_next), dim=1)",
    ]
    assert TODO_PREFIX not in migrated and migrate(migrated) == migrated


def test_a_model_called_in_the_concatenation_keeps_the_finding_with_what_to_split():
    migrated, diagnostics = migrate_with_findings(
        """\
        import torch
        import torch_xla
        def generate(model, idx, n, block_size):
            for _ in range(n):
                idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
                idx = torch.cat((idx, model(idx_cond)[:, -1:].argmax(-1)), dim=1)
            return idx
        """
    )
    [message] = [d.message for d in diagnostics if not d.fixed]
    assert "call the model in a statement of its own" in message
    assert migrated.count("torch_xla.sync()") == 1 and migrated.count(TODO_PREFIX) == 1
    assert migrate(migrated) == migrated


def test_the_sampling_message_says_why_cropping_in_the_call_does_not_help():
    migrated, diagnostics = migrate_with_findings(
        """\
        import torch
        import torch_xla
        def generate(model, idx, n, block_size):
            for _ in range(n):
                idx = torch.cat((idx, model(idx[:, -block_size:])[:, -1:].argmax(-1)), dim=1)
            return idx
        """
    )
    [message] = [d.message for d in diagnostics if not d.fixed]
    assert "the crop `idx[:, -block_size:]` does not help" in message and "buf[:, t] = y" in message
    assert "crop into a name of its own" in message and "call the model in a statement of its own" in message
    assert migrated.count(TODO_PREFIX) == 1 and migrated.count("torch_xla.sync()") == 1
    assert migrate(migrated) == migrated


def test_a_mask_named_parameter_given_randperm_positions_is_no_boolean_mask():
    # a graph network's split: the training function calls its index `mask_train`
    code = """\
        import torch

        def train(model, x, y, mask_train):
            out = model(x)
            return (out[mask_train] - y[mask_train]).pow(2).mean()

        def evaluate(model, x, y, mask):
            return model(x)[mask].sum()

        perm = torch.randperm(100).cuda()
        idx_val, idx_train = perm[:20], perm[20:]
        for _ in range(5):
            train(model, x, y, idx_train)
            evaluate(model, x, y, y > 0)
            evaluate(model, x, y, idx_val)
        """
    flagged = findings(textwrap.dedent(code), select=["XLA702"])
    assert flagged == [(8, "XLA702")]  # `mask` is also given `y > 0`: a boolean mask


def test_share_memory_without_workers_is_an_error_that_says_to_remove_it():
    code = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nmodel.share_memory()\n"
    migrated, diagnostics = migrate_with_findings(code)
    (finding,) = [d for d in diagnostics if d.code == "XLA611"]
    assert finding.severity == "error" and "remove it" in finding.message and "Hogwild" not in finding.message
    assert f"{TODO_PREFIX}XLA611" in migrated and "model.share_memory()\n" in migrated  # left as it is


def test_share_memory_names_the_workers_however_the_file_starts_them():
    code = (
        "import torch\nimport torch.multiprocessing as mp\n\n\ndef train(rank, model):\n    pass\n\n\n"
        "model = torch.nn.Linear(2, 2).cuda()\nmodel.share_memory()\nmp.spawn(train, args=(model,), nprocs=4)\n"
    )
    (finding,) = [d for d in migrate_with_findings(code)[1] if d.code == "XLA611"]
    assert "the workers `mp.spawn` starts" in finding.message and "Hogwild" in finding.message


@pytest.mark.parametrize(
    "code, expected, helper",
    [
        ("import torch.nn.functional as F\ny = F.elu(x)\n", "y = xla_elu(x)", "xla_elu"),
        ("from torch.nn.functional import celu\ny = celu(x, 2.0)\n", "y = xla_celu(x, 2.0)", "xla_celu"),
        ("import torch\ny = torch.selu(x)\n", "y = xla_selu(x)", "xla_selu"),
        ("import torch.nn as nn\nm = nn.Sequential(nn.ELU(alpha=0.5))\n", "nn.Sequential(XlaELU(alpha=0.5))", "XlaELU"),
        ("from torch import nn\ndef block(act=nn.SELU):\n    return act()\n", "def block(act=XlaSELU):", "XlaSELU"),
        ("import torch.nn.functional as F\ny = F.elu(x, inplace=flag)\n", "y = xla_elu(x, inplace=flag)", "xla_elu"),
    ],
)
def test_elu_family_calls_and_references_are_renamed_to_the_helpers(code, expected, helper):
    migrated = migrate(code, unsafe_fixes=True)
    assert expected in migrated
    assert migrated.count(f"def {helper}(") + migrated.count(f"class {helper}(") == 1
    assert migrate(migrated, unsafe_fixes=True) == migrated
    compile(migrated, "<migrated>", "exec")


def test_elu_family_is_fixed_by_default_and_in_place_forms_are_not():
    code = "import torch.nn.functional as F\ny = F.elu(x)\nz = F.elu(y, inplace=True)\nw = F.elu_(z)\n"
    migrated, diagnostics = migrate_with_findings(code)
    assert [(d.line, d.code, d.fixed) for d in diagnostics] == [(2, "XLA901", True)]
    assert "y = xla_elu(x)\nz = F.elu(y, inplace=True)\nw = F.elu_(z)\n" in migrated
    assert "TODO(xla-migrate)" not in migrated
