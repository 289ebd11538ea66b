"""Where an SPMD program's ``xr.use_spmd()`` goes: at the start of the script's run, before anything
uses the XLA runtime. SPMD user guide: call it at the beginning of the program; measured on
torch_xla 2.9 (CPU PJRT, four devices): a ``xr.local_ordinal()`` or ``torch_xla.device()`` before it
(a rank read from ``LOCAL_RANK``, PyTorch's FSDP2 example) and the sharded step's execution dies
with a segmentation fault. Shared by ``--target spmd`` (XLA670) and the sharding family (XLA620,
XLA623)."""

from __future__ import annotations

import libcst as cst

from codemods.shared.statements import is_import_line
from migrate_xla.rule.api import code_of, parse_expr, string_value, subtree


def is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":``, either way round."""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = {code_of(test.left).strip(), code_of(test.comparisons[0].comparator).strip()}
    return "__name__" in sides and any(string_value(parse_expr(s)) == "__main__" for s in sides - {"__name__"})


def starts_here(module: cst.Module) -> bool:
    """Whether ``module`` is a script whose run starts in it (a ``__main__`` block, or module-level
    code that moves to the device or trains); a library module's start is its importer's."""
    return any(is_main_guard(s) for s in module.body) or _moves_at_import(module.body) or _trains_at_import(module.body)


def at_script_start(
    original: cst.Module, updated: cst.Module, setup: list[cst.BaseStatement]
) -> tuple[cst.Module, cst.CSTNode] | None:
    """``updated`` with the statements ``setup`` where the script's run starts: first in its
    ``__main__`` block, or right after the imports in a flat script or one whose module-level code
    puts something on the device; and the statement of ``original`` they are told at. None for a
    library module (``starts_here``)."""
    body = list(updated.body)
    if any(is_main_guard(s) for s in original.body) and not _moves_at_import(original.body):
        # by position in each body: other rules may have added statements to the updated one
        where = next(i for i, s in enumerate(original.body) if is_main_guard(s))
        at = next(i for i, s in enumerate(body) if is_main_guard(s))
        block = body[at].body
        body[at] = body[at].with_changes(body=block.with_changes(body=[*setup, *block.body]))
    elif _moves_at_import(original.body) or _trains_at_import(original.body):
        where = 1 + max((i for i, s in enumerate(original.body) if is_import_line(s)), default=-1)
        setup = [setup[0].with_changes(leading_lines=[cst.EmptyLine()]), *setup[1:]]
        body[where:where] = setup
        where = min(where, len(original.body) - 1)
    else:
        return None
    return updated.with_changes(body=body), original.body[where]


def _module_level(body):
    """The nodes of the module-level code outside definitions and the ``__main__`` block."""
    return (
        n
        for s in body
        if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and not is_main_guard(s)
        for n in subtree(s)
    )


def _moves_at_import(body) -> bool:
    """Whether module-level code outside the ``__main__`` block puts something on the device
    (``model = Net().to(device)``): SPMD must be on before, right after the imports."""
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in ("to", "cuda")
        for n in _module_level(body)
    )


def _trains_at_import(body) -> bool:
    """Whether module-level code calls ``backward()``: a flat script, set up after its imports."""
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward"
        for n in _module_level(body)
    )
