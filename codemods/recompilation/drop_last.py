"""XLA701: a training ``DataLoader`` gets ``drop_last=True``: a short last batch is a
new shape (the migration guide's "Understanding Recompilations")."""

from __future__ import annotations

import libcst as cst

from codemods.recompilation.common import (
    DYNAMIC_SHAPES_DOC,
    RECOMPILATION_DOC,
    RECOMPILES,
    CompiledOnly,
    innermost_function,
    is_literal,
)
from codemods.shared.training_loops import DATALOADERS, EVAL_WORDS, name_words
from migrate_xla.rule.api import ON_ACCELERATOR, UNSAFE, Rule, append_keyword, call_arg, code_of


class DataLoaderDropLast(CompiledOnly, Rule):
    """A training ``DataLoader`` gets ``drop_last=True``.

    Guide, "Understanding Recompilations": when the data set does not divide into
    batches, the last batch of every epoch is smaller, has another shape, and compiles
    a graph of its own (and on a TPU pod, each process may stop at a different step).
    ``drop_last=True`` keeps one batch shape; it skips up to ``batch_size - 1`` samples an
    epoch (different ones each epoch when the loader shuffles), so the fix is unsafe.

    A loader is taken to be a training loader when it is given ``shuffle=True`` (a
    literal) or when its assignment target, its data set argument or the function that
    builds it has a word starting with ``train`` (``train_loader``, ``trainset``,
    ``get_train_loader``); a loader whose names say ``val``, ``valid``, ``test``,
    ``eval``, ``dev``, ``predict`` or ``infer`` never is (dropping evaluation samples
    changes the metric). ``drop_last=False`` becomes ``True``; loaders given
    ``batch_sampler=`` (which excludes ``drop_last``), ``batch_size=None``, a
    non-literal ``drop_last`` or ``**kwargs`` (which may carry it) are left alone.

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, which compiles the
    step again for the short batch's shape (the family's docstring).
    """

    CODE = "XLA701"
    NAME = "dataloader-drop-last"
    SUMMARY = "training DataLoaders get drop_last=True, so the last batch keeps the batch shape"
    FIX = UNSAFE
    SEVERITY = "warning"
    TRIGGERS = (r"DataLoader",)
    REQUIRES = (ON_ACCELERATOR,)
    BEFORE = (
        "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(train_set, batch_size=64, shuffle=True)\n"
    )
    AFTER = (
        "from torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(train_set, batch_size=64, shuffle=True, drop_last=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in DATALOADERS or any(a.star for a in original.args):
            return updated
        batch_size = call_arg(original, 1, "batch_size")
        if call_arg(original, 4, "batch_sampler") is not None or (
            batch_size is not None and is_literal(batch_size.value, "None")
        ):
            return updated
        drop_last = call_arg(original, 8, "drop_last")
        if drop_last is not None and not (drop_last.keyword is not None and is_literal(drop_last.value, "False")):
            return updated
        why = self._training(original)
        if why is None or not self.matters():
            return updated
        if drop_last is None:
            replacement = append_keyword(updated, "drop_last", cst.Name("True"))
        else:
            replacement = updated.with_changes(
                args=[
                    a.with_changes(value=cst.Name("True"))
                    if a.keyword is not None and a.keyword.value == "drop_last"
                    else a
                    for a in updated.args
                ]
            )
        if self.ctx.api.lazy:
            cost, doc = "another shape and compiles another graph", RECOMPILATION_DOC
        else:
            cost, doc = f"another shape, and {RECOMPILES}", DYNAMIC_SHAPES_DOC
        return self.replace(
            original,
            updated,
            replacement,
            f"training DataLoader ({why}) without `drop_last=True`: its last, smaller batch has "
            f"{cost}; `drop_last=True` skips that batch (up to batch_size - 1 samples an epoch); see {doc}",
        )

    def _training(self, call: cst.Call) -> str | None:
        """Why ``call`` is taken for a training loader (for the message), or None."""
        names: list[str] = []
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names += [code_of(t.target) for t in small.targets]
                elif isinstance(small, cst.AnnAssign):
                    names.append(code_of(small.target))
        dataset = call_arg(call, 0, "dataset")
        if dataset is not None:
            names.append(code_of(dataset.value))
        function = innermost_function(self.ctx.statements)
        if function is not None:
            names.append(function.name.value)
        words = set().union(*(name_words(n) for n in names)) if names else set()
        if words & EVAL_WORDS:
            return None
        shuffle = call_arg(call, 2, "shuffle")
        if shuffle is not None and is_literal(shuffle.value, "True"):
            return "shuffle=True"
        named = next((n for n in names if any(w.startswith("train") for w in name_words(n))), None)
        return f"`{' '.join(named.split())}`" if named is not None else None
