"""What the target rules share: ``TargetRule``, the base of the whole-script forms, and
whether a script distributes itself already (then they leave it alone)."""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule.api import ON_ACCELERATOR, Import, Rule, code_nodes, subtree

XS = Import("torch_xla.distributed.spmd", asname="xs")

SPMD_DOC = "https://docs.pytorch.org/xla/master/perf/spmd_basic.html"

# What makes a script distributed already: it starts processes or groups them itself.
LAUNCHERS = {
    "torch.multiprocessing.spawn",
    "torch.multiprocessing.start_processes",
    "torch_xla.launch",
    "torch_xla.distributed.xla_multiprocessing.spawn",
    "torch.distributed.init_process_group",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.distributed.launch",
    "torch.distributed.run",
}
DISTRIBUTED_TEXT = re.compile(
    r"\b(?:spawn|start_processes|launch|init_process_group|DistributedDataParallel|_mp_fn|use_spmd)\b"
)
WORKER = "_mp_fn"


def distributes_itself(rule: Rule, module: cst.Module) -> bool:
    """Whether the file launches processes, groups them, or is already in a target's form.

    Decided on the whole file (``ctx.shared``, once for all target rules), by the launcher
    calls and classes it names, resolved through its imports.
    """
    if "distributed" not in rule.ctx.shared:
        text = rule.ctx.source
        found = bool(DISTRIBUTED_TEXT.search(text)) and any(
            isinstance(node, (cst.Name, cst.Attribute)) and _launcher(rule, node) for node in code_nodes(module)
        )
        rule.ctx.shared["distributed"] = found or f"def {WORKER}(" in text or "use_spmd()" in text
    return bool(rule.ctx.shared["distributed"])


def _launcher(rule: Rule, node: cst.CSTNode) -> bool:
    return rule.qualname(node) in LAUNCHERS


class TargetRule(Rule):
    """A rule of a target's whole-script form. It asks about the whole file at the start:
    the engine learns imports as it meets them, so the file's imports are learned first
    (once for all target rules), and a file that ``skips`` (by default one that launches
    processes, groups them or is in a target's form already) is left alone."""

    skip = False
    REQUIRES = (ON_ACCELERATOR,)  # a script that runs on the CPU keeps its form
    WHOLE_MODULE = True  # it moves and wraps the script's code, and reads its whole text (ctx.source)

    def visit_Module(self, node: cst.Module) -> None:
        if not self.ctx.shared.get("imports learned"):
            self.ctx.shared["imports learned"] = True
            for statement in subtree(node):
                if isinstance(statement, (cst.Import, cst.ImportFrom)):
                    self.ctx.learn_import(statement)
        self.skip = self.skips(node)

    def skips(self, module: cst.Module) -> bool:
        return distributes_itself(self, module)


def parse_statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)
