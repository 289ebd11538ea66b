"""XLA652 (``--target multiprocess``): printing and logging in the workers happen on the
master ordinal only (the migration guide's "Distributed Training")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.statements import call_of
from codemods.targets.common import TargetRule
from migrate_xla.rule.api import SAFE, XM, code_of, last_name, parse_expr

MASTER_GUARD = re.compile(r"master|rank|ordinal", re.IGNORECASE)
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
LOGGER_NAME = re.compile(r"log", re.IGNORECASE)


class MasterOnlyOutput(TargetRule):
    """Printing and logging in the workers happen on the master ordinal only.

    Guide, "Distributed Training": every process runs the same code, so a ``print`` or
    ``logger.info`` in the training code would repeat once per device. Runs of such
    statements inside functions go under one ``if xm.is_master_ordinal(local=False):``
    (the global master, as the guide's example). Statements already under a test that
    names a rank, an ordinal or the master are left alone, and so is module-level code,
    which must not ask for the ordinal before ``torch_xla.launch`` starts the runtime.
    Saving needs nothing: ``xm.save`` (XLA501) writes from the master only by default.

    PyTorch/XLA only: the master is ``xr.global_ordinal()``'s, and ``--runtime torch-tpu``
    refuses ``--target multiprocess``.
    """

    CODE = "XLA652"
    NAME = "master-only-output"
    SUMMARY = "print / logging in the training code runs under xm.is_master_ordinal() only"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"print\(|log",)
    BEFORE = "def train(loader):\n    for x in loader:\n        print(x)\n"
    AFTER = "def train(loader):\n    for x in loader:\n        if xm.is_master_ordinal(local=False):\n            print(x)\n"

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        stack = self.ctx.statements
        if self.skip or not any(isinstance(s, cst.FunctionDef) for s in stack):
            return updated
        if any(isinstance(s, cst.If) and MASTER_GUARD.search(code_of(s.test)) for s in stack):
            return updated
        body, run, changed = [], [], False
        for statement in [*updated.body, None]:
            if statement is not None and self._output(statement):
                run.append(statement)
                continue
            if run:
                guard = cst.If(
                    test=parse_expr("xm.is_master_ordinal(local=False)"),
                    body=cst.IndentedBlock(body=[run[0].with_changes(leading_lines=[]), *run[1:]]),
                    leading_lines=run[0].leading_lines,
                )
                first = next((s for s in original.body if s.deep_equals(run[0])), original)
                self.replace(
                    first,
                    updated,
                    None,
                    f"{len(run)} print/log statement{'s' if len(run) > 1 else ''} now run on the master ordinal only",
                    imports=[XM],
                )
                if self.fixes(first):
                    body.append(guard)
                    changed = True
                else:  # a suppression comment keeps the statements as they are
                    body.extend(run)
                run = []
            if statement is not None:
                body.append(statement)
        return updated.with_changes(body=body) if changed else updated

    def _output(self, statement: cst.BaseStatement) -> bool:
        call = call_of(statement)
        if call is None:
            return False
        func = call.func
        if isinstance(func, cst.Name):
            return func.value == "print" and "print" not in self.ctx.aliases
        name = self.qualname(func) or ""
        if name.startswith("logging."):
            return True
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in LOG_METHODS
            and bool(LOGGER_NAME.search(last_name(func.value)))
            and not name
        )
