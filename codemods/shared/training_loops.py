"""What a training loop looks like, as several families tell it: an optimizer's name,
a call that trains (``backward()``, ``optimizer.step()``), the DataLoader classes, and the
words that mark evaluation data (``val_loader``, ``test_ds``).

Shared by lazy_execution (XLA2xx), amp (XLA403's scaler made elsewhere), recompilation
(XLA701), targets (XLA650, XLA651) and the batch-move proof (shared/batch_moves.py)."""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule.api import children, last_name

OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?(\d*|_\w+)$|optimi[sz]er", re.IGNORECASE)


def is_training_step_call(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and (
            node.func.attr.value == "backward"
            or (node.func.attr.value == "step" and bool(OPTIMIZER_NAME.search(last_name(node.func.value))))
        )
    )


_NESTED_DEFS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)  # no subclasses: `type(x) in` is isinstance


def calls_training_step(node: cst.CSTNode) -> bool:
    """Whether a loop body calls backward() or steps an optimizer (not looking into nested defs)."""
    stack = [node]
    while stack:
        found = stack.pop()
        if is_training_step_call(found):
            return True
        stack.extend(child for child in children(found) if type(child) not in _NESTED_DEFS)
    return False


def name_words(text: str) -> set[str]:
    """``train_loader``, ``valDataset``, ``self.test_ds`` -> lower-case words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.split(r"[^A-Za-z]+", spaced) if w}


EVAL_WORDS = {
    "val",
    "valid",
    "validation",
    "test",
    "testing",
    "eval",
    "evaluation",
    "evaluate",
    "dev",
    "holdout",
    "infer",
    "inference",
    "predict",
    "prediction",
}

DATALOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
