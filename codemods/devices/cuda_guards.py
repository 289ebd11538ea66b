"""Availability checks that guard CUDA-only code: what XLA105 leaves as CUDA checks (so that
they stay False on XLA) and XLA106 does not flag (the queries they guard do not run there).

A ``torch.cuda.is_available()`` usually means "use the accelerator", and XLA105 makes it ask
for the XLA device. But some guard code that only a GPU can run: denoising-diffusion-pytorch's
``Attend.__init__`` returns early ``if not torch.cuda.is_available() or not flash`` and then
reads ``torch.cuda.get_device_properties(...)`` to pick flash attention; asked for the XLA
device, the check let the migrated run into that code, which died ("Found no NVIDIA driver").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.shared.walk import walked
from migrate_xla.rule.api import FileContext, subtree

AVAILABILITY = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available"})
# What only a GPU runs, and no rule converts or removes (a second run must find the guarded code
# as the first did): the device-property and memory queries that raise without a GPU (XLA106
# flags them), CUDA extensions and Triton kernels (XLA805, XLA806 flag them).
CUDA_ONLY_CALLS = frozenset(
    {
        "torch.cuda.get_device_properties",
        "torch.cuda.get_device_capability",
        "torch.cuda.mem_get_info",
        "torch.cuda.memory_summary",
    }
)
CUDA_ONLY_PREFIXES = ("torch.utils.cpp_extension.", "triton.")
# Guarded code that does more than configure a CUDA feature: it trains, moves or loops. A check
# of such code is the script's choice of device, and XLA105 converts it as usual.
TRAINING_METHODS = frozenset({"cuda", "to", "backward", "step", "train", "fit"})
EXITS = (cst.Return,)  # not raise / sys.exit: those say the script needs a device, which XLA has


@dataclass
class CudaGuards:
    checks: dict[int, str] = field(default_factory=dict)  # availability call -> the CUDA-only API it guards
    guarded: set[int] = field(default_factory=set)  # CUDA-only calls behind a check kept for CUDA
    # attributes (`self.cuda_config`) given a value only behind such a check (None elsewhere): a
    # CUDA check of a method that reads one picks what XLA never gets (XLA104 keeps it)
    state: set[str] = field(default_factory=set)
    assigns: set[int] = field(default_factory=set)  # the assignments behind a kept check


def cuda_guards(ctx: FileContext, module: cst.Module) -> CudaGuards:
    """The availability checks of ``module`` that guard CUDA-only code; made once a file.

    Guarded: an ``if``'s body when the test holding implies the check holds (``if
    torch.cuda.is_available() and flash:``), its ``else`` when the test failing implies it, and
    the statements after an ``if`` whose body returns (``if not torch.cuda.is_available() or
    not flash: return``) when the test failing implies it; a conditional expression's branches
    likewise, and the right operand of ``and`` / ``or`` (``torch.cuda.is_available() and
    torch.cuda.get_device_capability()[0] >= 8``). The guarded code must call a CUDA-only API (``CUDA_ONLY_CALLS``) and do nothing
    else a training script does on its device (no loop, no ``.cuda()`` / ``.to()`` /
    ``backward()`` / ``step()`` call): code that configures a CUDA feature.
    """
    if "cuda_guards" not in ctx.shared:
        found = CudaGuards()
        if "is_available" in ctx.source and any(name.rsplit(".", 1)[1] in ctx.source for name in CUDA_ONLY_CALLS):
            nodes = [node for node, _ in walked(ctx, module)]
            _find(*_scan(nodes), found)
            if found.state:
                _only_behind_checks(nodes, found)
        ctx.shared["cuda_guards"] = found
    return ctx.shared["cuda_guards"]


def _scan(nodes: list[cst.CSTNode]) -> tuple[FileContext, list[cst.CSTNode]]:
    """The file's imports, learned, and the nodes that may guard code (blocks, conditional
    expressions, ``and`` / ``or``), from the module's ``nodes``: the imports known before any
    check is read (an import may come after the code that uses it)."""
    names, candidates = FileContext(), []
    for node in nodes:
        node_type = type(node)  # exact type checks: isinstance on LibCST's ABCs is slow
        if node_type is cst.Import or node_type is cst.ImportFrom:
            names.learn_import(node)
        elif node_type in _GUARDING:
            candidates.append(node)
    return names, candidates


_GUARDING = frozenset({cst.Module, cst.IndentedBlock, cst.IfExp, cst.BooleanOperation})


def _find(names: FileContext, candidates: list[cst.CSTNode], found: CudaGuards) -> None:
    for node in candidates:
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            body = list(node.body)
            for i, statement in enumerate(body):
                if isinstance(statement, cst.If):
                    after = body[i + 1 :] if _exits(statement.body) else []
                    _guard(names, statement.test, [statement.body], [statement.orelse, *after], found)
        elif isinstance(node, cst.IfExp):
            _guard(names, node.test, [node.body], [node.orelse], found)
        else:  # `a and b` evaluates b when a holds; `a or b`, when it fails
            conjunction = isinstance(node.operator, cst.And)
            _guard(names, node.left, [node.right] if conjunction else [], [] if conjunction else [node.right], found)


def _exits(block: cst.BaseSuite) -> bool:
    """Whether ``block`` ends by returning."""
    if isinstance(block, cst.SimpleStatementSuite):
        small = block.body
    else:
        last = block.body[-1] if block.body else None
        small = last.body if isinstance(last, cst.SimpleStatementLine) else []
    return bool(small) and isinstance(small[-1], EXITS)


def _guard(names: FileContext, test: cst.BaseExpression, when_true: list, when_false: list, found: CudaGuards):
    for check in subtree(test):
        if not (isinstance(check, cst.Call) and names.qualname(check.func) in AVAILABILITY):
            continue
        guarded = [
            node
            for held, code in ((True, when_true), (False, when_false))
            if _implies(test, held, check)
            for node in code
            if node is not None
        ]
        api = _cuda_only_code(names, guarded)
        if api is not None:
            found.checks[id(check)] = api
            found.guarded |= {
                id(call) for node in guarded for call in subtree(node) if _cuda_only(names, call) is not None
            }
            for node in guarded:
                for assign in subtree(node):
                    attributes = _self_attributes(assign)
                    if attributes:
                        found.state |= attributes
                        found.assigns.add(id(assign))


def _self_attributes(node: cst.CSTNode) -> set[str]:
    """The attributes of ``self`` an assignment sets (``self.cuda_config = ...``)."""
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return set()
    return {
        t.attr.value
        for t in targets
        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
    }


def _only_behind_checks(nodes: list[cst.CSTNode], found: CudaGuards) -> None:
    """Keep in ``found.state`` only the attributes no assignment outside the kept checks gives a value (None aside)."""
    for node in nodes:
        if id(node) in found.assigns or not isinstance(node, (cst.Assign, cst.AnnAssign)):
            continue
        if isinstance(node.value, cst.Name) and node.value.value == "None":
            continue
        found.state -= _self_attributes(node)


def _implies(test: cst.BaseExpression, value: bool, check: cst.Call) -> bool:
    """Whether ``test`` being ``value`` implies that ``check`` (in it) holds."""
    if test is check:
        return value
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _implies(test.expression, not value, check)
    if (
        isinstance(test, cst.Call)
        and len(test.args) == 1
        and isinstance(test.func, cst.Name)
        and test.func.value == "bool"
    ):
        return _implies(test.args[0].value, value, check)
    if isinstance(test, cst.BooleanOperation):
        left, right = _implies(test.left, value, check), _implies(test.right, value, check)
        conjunction = isinstance(test.operator, cst.And)
        # `a and b` true: both hold; false: one fails. `a or b` true: one holds; false: both fail.
        return (left or right) if conjunction == value else (left and right)
    return False


def _cuda_only(names: FileContext, node: cst.CSTNode) -> str | None:
    if not isinstance(node, cst.Call):
        return None
    name = names.qualname(node.func) or ""
    return name if name in CUDA_ONLY_CALLS or name.startswith(CUDA_ONLY_PREFIXES) else None


def _cuda_only_code(names: FileContext, code: list[cst.CSTNode]) -> str | None:
    """The CUDA-only API ``code`` calls, when it does nothing a training script does on its device."""
    api = None
    for node in code:
        for part in subtree(node):
            if isinstance(part, (cst.For, cst.While)):
                return None
            if isinstance(part, cst.Call):
                if isinstance(part.func, cst.Attribute) and part.func.attr.value in TRAINING_METHODS:
                    if names.qualname(part.func) is None:  # a method called on a value: model.cuda()
                        return None
                api = api or _cuda_only(names, part)
    return api
