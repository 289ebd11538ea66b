"""What the XLA7xx rules share: "the training path" (the family's docstring says what
it is), and the recompilation document their messages cite."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from migrate_xla.rule.api import Rule, find

RECOMPILATION_DOC = "https://docs.pytorch.org/xla/master/perf/recompilation.html"
# What TorchTPU's messages cite: torch.compile's shapes (a recompile each), and its graph breaks
DYNAMIC_SHAPES_DOC = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
GRAPH_BREAKS_DOC = "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html"
COMPILE = "torch.compile"
RECOMPILES = "`torch.compile` compiles the step again for it (until it marks that size dynamic)"

TRAINING_FUNCTION = re.compile(r"train|step|forward|loss|fit|eval|valid|predict|infer", re.IGNORECASE)
DATA_FUNCTION = re.compile(
    r"^__(getitem|iter|len|init)__$|collate|preprocess|prepare|load|dataset|tokeni[sz]e", re.IGNORECASE
)
# A class whose code runs on the host, in the DataLoader's workers: a data set (by its own
# name or a base's) or a sampler (by a base's name: a diffusion model's DDIMSampler runs the model)
DATA_CLASS = re.compile(r"dataset$", re.IGNORECASE)
DATA_BASE = re.compile(r"(dataset|sampler)$", re.IGNORECASE)

# A necessary condition for in_training_path: a for / while statement (it starts a line;
# comprehensions are not statements) or a function named like a training one.
TRAINING_PATH = (
    r"(?m:^[ \t\f]*(?:async[ \t]+)?(?:for|while)\b)"
    r"|def[\s\\]+\w*(?i:train|step|forward|loss|fit|eval|valid|predict|infer)"
)


def hazards_matter(rule: Rule, module: cst.Module | None) -> bool:
    """Whether a recompilation hazard matters in this file: always on PyTorch/XLA, which traces
    and compiles every step; on TorchTPU, which runs eagerly, only where the file compiles
    something: it refers to ``torch.compile`` (a call, a decorator) or calls a module's
    ``.compile()``. Found once a file, over the whole file (a slice is parsed whole first)."""
    ctx = rule.ctx
    if ctx.api.lazy:
        return True
    if COMPILE not in ctx.shared:
        ctx.need_whole_module()  # the torch.compile may be in code a slice left out
        ctx.shared[COMPILE] = (
            module is not None
            and "compile" in ctx.source
            and find(module, lambda node: _compiles(rule, node)) is not None
        )
    return bool(ctx.shared[COMPILE])


def _compiles(rule: Rule, node: cst.CSTNode) -> bool:
    """``torch.compile`` by any import of it, or ``model.compile()`` (matched by shape)."""
    if isinstance(node, (cst.Name, cst.Attribute)) and rule.qualname(node) == COMPILE:
        return True
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "compile"
        and rule.qualname(node.func) is None
    )


class CompiledOnly:
    """A mixin of the XLA7xx rules: the module, for ``hazards_matter``."""

    module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def matters(self) -> bool:
        return hazards_matter(self, self.module)


def innermost_function(statements: Sequence[cst.CSTNode]) -> cst.FunctionDef | None:
    return next((s for s in reversed(statements) if isinstance(s, cst.FunctionDef)), None)


def _is_data_class(node: cst.CSTNode) -> bool:
    """``class Pairs(Dataset)``, ``class Stream(data.IterableDataset)``, ``class MyDataset(Base)``,
    ``class BucketSampler(Sampler)``."""
    if not isinstance(node, cst.ClassDef):
        return False
    bases = [_last_name(base.value) for base in node.bases if base.keyword is None]
    return bool(DATA_CLASS.search(node.name.value)) or any(DATA_BASE.search(name) for name in bases)


def _last_name(node: cst.CSTNode) -> str:
    """``Dataset`` for ``Dataset``, ``data.Dataset`` and ``Generic[T]``'s ``Generic``."""
    if isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


def in_training_path(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether the innermost statement runs in the training (or evaluation) step, by the
    module docstring's approximation."""
    if any(_is_data_class(statement) for statement in statements):
        return False
    function = innermost_function(statements)
    if function is not None:
        name = function.name.value
        if DATA_FUNCTION.search(name):
            return False
        if TRAINING_FUNCTION.search(name):
            return True
    for statement in reversed(statements):
        if statement is function:
            return False
        if isinstance(statement, (cst.For, cst.While)):
            return True
    return False


def is_literal(node: cst.CSTNode, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value
