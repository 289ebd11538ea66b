"""Where XLA201 puts the training iteration's ``torch_xla.sync()``: after whatever updates the
parameters (an optimizer step or an update written by hand), exactly once per iteration,
and nowhere the iteration already syncs.

Each case is written as the expected migration: lines marked ``# +`` are the syncs the rule
must add; the input is the same code without them.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.engine.pipeline import SLICE_FROM

ADDED = "  # +"


def fill(template: str, part: str) -> str:
    """``template`` (dedented) with its ``{part}`` line replaced by ``part``'s lines, at its indentation."""
    template = textwrap.dedent(template)
    indent = re.search(r"^( *)\{part\}$", template, re.MULTILINE).group(1)
    return template.replace(f"{indent}{{part}}", textwrap.indent(part, indent))


def check(expected: str) -> None:
    """Migrating ``expected`` without its ``# +`` lines gives back ``expected`` (unmarked)."""
    expected = "import torch\nimport torch_xla\n" + textwrap.dedent(expected)
    source = "".join(line for line in expected.splitlines(keepends=True) if not line.rstrip().endswith(ADDED))
    migrated, diagnostics = migrate_code(source, options_for(select=["XLA201"]))
    assert migrated == expected.replace(ADDED, "")
    assert len(diagnostics) == expected.count(ADDED)
    again, later = migrate_code(migrated, options_for(select=["XLA201"]))
    assert again == migrated and not later


@pytest.mark.parametrize(
    "update",
    [
        "for p in model.parameters():\n    p.data.add_(p.grad, alpha=-lr)",
        "for p in model.parameters():\n    p.data.add_(-lr, p.grad.data)",
        "for p in model.parameters():\n    p.data -= lr * p.grad",
        "for p in model.parameters():\n    p.data = p.data - lr * p.grad",
        "for name, p in model.named_parameters():\n    if p.requires_grad:\n        p.sub_(lr * p.grad)",
        "for p in params:\n    d_p = p.grad.data\n    p.data.add_(d_p, alpha=-lr)",
        "for group in optimizer.param_groups:\n    for p in group['params']:\n        p.add_(p.grad, alpha=-group['lr'])",
        "with torch.no_grad():\n    for p in model.parameters():\n        p -= lr * p.grad",
        "with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad\n    w.grad = None",
        "with torch.no_grad(): w -= lr * w.grad",
        "self.weight.data -= lr * self.weight.grad.data",
    ],
)
def test_a_hand_written_update_gets_one_sync_after_it(update):
    check(
        fill(
            """\
        for x, y in batches:
            loss = loss_fn(model(x), y)
            loss.backward()
            {part}
            torch_xla.sync()  # +
            print(loss.item())
        """,
            update,
        )
    )


@pytest.mark.parametrize(
    "loop",
    [
        "for p in model.parameters():\n    p.grad.zero_()",
        "for p in model.parameters():\n    p.grad = None",
        "for p in model.parameters():\n    p.grad.data.clamp_(-1, 1)",
        "for p in critic.parameters():\n    p.data.clamp_(-0.01, 0.01)",
        "for g in optimizer.param_groups:\n    g['lr'] = lr",
        "for e, p in zip(ema.parameters(), model.parameters()):\n    e.mul_(0.99).add_(p, alpha=0.01)",
        "for n, p in model.named_parameters():\n    fisher[n] += p.grad ** 2",
        # moving parameters with their gradients (Module._apply, FSDP's init) is no update
        "for p in params:\n    p.data = p.to(device)\n    if p.grad is not None:\n        p.grad.data = p.grad.to(device)",
        "for p in params:\n    p.grad = torch.ones_like(p.data)\n    p.data = torch.zeros_like(p.data)",
    ],
)
def test_loops_over_parameters_that_do_not_update_them_from_gradients_get_none(loop):
    check(
        fill(
            """\
        def tend(model):
            {part}
        """,
            loop,
        )
    )


def test_a_gan_gets_one_sync_after_its_last_step_also_when_that_one_is_conditional():
    check("""\
        for i, (real, _) in enumerate(batches):
            d_loss(real).backward()
            optimizer_D.step()
            if i % n_critic == 0:
                g_loss().backward()
                optimizer_G.step()
            torch_xla.sync()  # +
        """)
    check("""\
        for i, (real, _) in enumerate(batches):
            if i % 2 == 0:
                d_loss(real).backward()
                optimizer_D.step()
            g_loss().backward()
            optimizer_G.step()
            torch_xla.sync()  # +
            log(i)
        """)


def test_updates_that_only_happen_under_an_if_get_their_sync_inside_each_branch():
    check("""\
        for i, (x, y) in enumerate(batches):
            (loss_fn(model(x), y) / accum).backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                torch_xla.sync()  # +
                optimizer.zero_grad()
        """)
    check("""\
        for x, y in batches:
            loss_fn(model(x), y).backward()
            if use_sgd:
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                torch_xla.sync()  # +
            else:
                optimizer.step()
                torch_xla.sync()  # +
        """)


def test_an_lbfgs_closure_gets_no_sync_the_step_that_calls_it_does():
    check("""\
        while run[0] <= num_steps:
            def closure():
                optimizer.zero_grad()
                loss = model(input_img)
                loss.backward()
                run[0] += 1
                return loss
            optimizer.step(closure)
            torch_xla.sync()  # +
        """)


def test_a_step_in_a_helper_gets_its_sync_in_the_helper_unless_its_caller_syncs():
    check("""\
        def _run_batch(model, optimizer, x, y):
            loss_fn(model(x), y).backward()
            optimizer.step()
            torch_xla.sync()  # +

        def train(model, optimizer, batches):
            for x, y in batches:
                _run_batch(model, optimizer, x, y)
        """)
    check("""\
        class Trainer:
            def _run_batch(self, x, y):
                loss_fn(self.model(x), y).backward()
                for p in self.model.parameters():
                    p.data.add_(p.grad, alpha=-self.lr)

            def _run_epoch(self):
                for x, y in self.batches:
                    self._run_batch(x, y)
                    torch_xla.sync()
        """)


@pytest.mark.parametrize(
    "synced",
    [
        # the sync already follows the step, or opens the iteration
        "loss.backward()\noptimizer.step()\ntorch_xla.sync()",
        "torch_xla.sync()\nloss.backward()\noptimizer.step()",
        "loss.backward()\noptimizer.step()\nxm.mark_step()",
        "loss.backward()\nxm.optimizer_step(optimizer)",
        # a sync around the `if` that steps
        "loss.backward()\nif (i + 1) % accum == 0:\n    optimizer.step()\ntorch_xla.sync()",
        # a StepTrace syncs when it closes
        "with xp.StepTrace('train', step_num=i):\n    loss.backward()\n"
        "    for p in model.parameters():\n        p.data.add_(p.grad, alpha=-lr)",
    ],
)
def test_an_iteration_that_already_syncs_gets_no_second_sync(synced):
    check(
        fill(
            """\
        import torch_xla.core.xla_model as xm
        import torch_xla.debug.profiler as xp

        for i, (x, y) in enumerate(batches):
            loss = loss_fn(model(x), y)
            {part}
        """,
            synced,
        )
    )


def test_an_optimizer_written_by_hand_gets_no_sync_in_its_step():
    check("""\
        class PlainSGD(torch.optim.Optimizer):
            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.add_(p.grad, alpha=-group["lr"])

        def sgd_step(params, lr):
            with torch.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-lr)
            torch_xla.sync()  # +
        """)


def test_steps_that_take_no_closure_and_optimizers_own_steps_are_left_to_their_callers():
    check("""\
        class PostLocalSGD(torch.optim.Optimizer):
            def step(self):
                self.optim.step()
                self.averager.average_parameters(params=self.param_groups)

        class LocalOptimizer:
            def step(self, autograd_ctx_id):
                grads = dist_autograd.get_gradients(autograd_ctx_id)
                self.optim.step(grads)

        def train(model, dist_optim, batches):
            for x in batches:
                with dist_autograd.context() as context_id:
                    dist_autograd.backward(context_id, [model(x).sum()])
                    dist_optim.step(context_id)
        """)
    check("""\
        for x in batches:
            optimizer.step(lambda: model(x).sum())
            torch_xla.sync()  # +
        """)


def test_a_step_in_a_profiler_trace_gets_its_sync_after_the_trace_also_under_an_if():
    check("""\
        import torch_xla.debug.profiler as xp

        for i, (x, y) in enumerate(batches):
            with xp.Trace("train_step"):
                loss_fn(model(x), y).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
            torch_xla.sync()  # +
        """)


def test_evaluation_loops_get_no_training_sync():
    code = textwrap.dedent("""\
        import torch

        @torch.no_grad()
        def evaluate(model, batches):
            total = 0
            for x, y in batches:
                total += (model(x).argmax(1) == y).sum()
            return total
        """)
    assert migrate_code(code, options_for(select=["XLA201"])) == (code, [])


def test_a_big_file_sliced_for_speed_still_sees_the_sync_after_a_helpers_call():
    filler = "".join(f"\n\ndef unrelated_{i}(a, b):\n    return a * {i} + b\n" for i in range(SLICE_FROM // 40))
    code = (
        textwrap.dedent("""\
        import torch_xla


        def _run_batch(model, optimizer, x, y):
            loss_fn(model(x), y).backward()
            optimizer.step()
        """)
        + filler
        + textwrap.dedent("""\


        def train(model, optimizer, batches):
            for x, y in batches:
                _run_batch(model, optimizer, x, y)
                torch_xla.sync()
        """)
    )
    assert len(code) > SLICE_FROM
    assert migrate_code(code, options_for(select=["XLA201"])) == (code, [])
