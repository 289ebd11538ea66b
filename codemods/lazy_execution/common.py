"""What the XLA2xx rules share: the calls that sync (cut and run the graph), the
contexts that turn gradients off, and the scopes whose code runs later."""

from __future__ import annotations

import libcst as cst

from codemods.shared.statements import call_of
from migrate_xla.rule.api import Rule

SYNC_CALLS = {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.core.xla_model.optimizer_step"}

NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)  # code that runs when called, not here


def is_sync_statement(rule: Rule, statement: cst.BaseStatement) -> bool:
    """``torch_xla.sync()``, ``xm.mark_step()`` or ``xm.optimizer_step(...)`` on a line of its own."""
    call = call_of(statement)
    return call is not None and rule.qualname(call.func) in SYNC_CALLS
