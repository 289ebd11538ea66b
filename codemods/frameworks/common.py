"""What the framework rules share: the frameworks' names, argument edits, the documents cited."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule.api import EQUAL, append_keyword, call_arg, code_of, drop_items, parse_expr, string_value

LIGHTNING_TPU = "https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html"
LIGHTNING_PRECISION = "https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html"
HF_TPU = "https://huggingface.co/docs/transformers/perf_train_tpu"
ACCELERATE_TPU = "https://huggingface.co/docs/accelerate/concept_guides/training_tpu"
MAT_MUL_PRECISION = "https://docs.pytorch.org/xla/master/tutorials/precision_tutorial.html"
FRAMEWORKS_DOC = "docs/frameworks.md"

LIGHTNING_TRAINERS = frozenset(
    f"{package}{module}.Trainer"
    for package in ("pytorch_lightning", "lightning", "lightning.pytorch")
    for module in ("", ".trainer", ".trainer.trainer")
)
FABRICS = frozenset(
    f"{package}{module}.Fabric"
    for package in ("lightning", "lightning.fabric", "lightning_fabric")
    for module in ("", ".fabric")
    if not (package == "lightning" and module)
)
LIGHTNING_PACKAGES = ("pytorch_lightning", "lightning", "lightning_fabric")


def lightning_class(qualname: str | None, *names: str) -> bool:
    """Whether ``qualname`` is one of Lightning's classes ``names`` (``DDPStrategy``), from any
    of its packages and modules (``lightning.pytorch.strategies.DDPStrategy``, ``pytorch_lightning...``)."""
    if qualname is None or "." not in qualname:
        return False
    package, _, rest = qualname.partition(".")
    return package in LIGHTNING_PACKAGES and rest.rsplit(".", 1)[-1] in names


def what(call: cst.Call, qualname: str) -> str:
    """``Trainer`` or ``Fabric``: how a message names the call."""
    return "Fabric" if qualname in FABRICS else "Trainer"


def literal(node: cst.BaseExpression) -> str | int | None:
    """A string's value, an integer's, a negative integer's; None for anything else."""
    value = string_value(node)
    if value is not None:
        return value
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = node.expression
        if isinstance(inner, cst.Integer):
            return -int(inner.evaluated_value)
    return None


def with_value(call: cst.Call, keyword: str, value: str) -> cst.Call:
    """``call`` with the argument ``keyword`` given ``value`` (code), kept where it was, or added last."""
    arg = call_arg(call, None, keyword)
    if arg is None:
        return append_keyword(call, keyword, parse_expr(value))
    args = [a.with_changes(value=parse_expr(value)) if a is arg else a for a in call.args]
    return call.with_changes(args=args)


def without(call: cst.Call, *keywords: str) -> cst.Call:
    """``call`` without the arguments ``keywords``."""
    return call.with_changes(
        args=drop_items(call.args, lambda a: a.keyword is not None and a.keyword.value in keywords)
    )


def renamed(call: cst.Call, keyword: str, new: str, value: str | None = None) -> cst.Call:
    """``call`` with the argument ``keyword`` renamed ``new`` (its value ``value`` when given)."""
    args = []
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            arg = arg.with_changes(keyword=cst.Name(new), equal=arg.equal if arg.equal else EQUAL)
            if value is not None:
                arg = arg.with_changes(value=parse_expr(value))
        args.append(arg)
    return call.with_changes(args=args)


def shown(arg: cst.Arg) -> str:
    """``precision="16-mixed"``: an argument as a message quotes it."""
    return f"{arg.keyword.value}={code_of(arg.value)}" if arg.keyword is not None else code_of(arg.value)
