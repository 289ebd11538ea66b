"""XLA659 (``--target multiprocess``): the script's training code runs in ``def
_mp_fn(index)``, launched by ``torch_xla.launch`` (the migration guide's "Distributed Training")."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.shared.spmd_start import is_main_guard
from codemods.shared.statements import assigned_names, is_import_line
from codemods.targets.common import WORKER, TargetRule, parse_statement
from migrate_xla.rule.api import SAFE, TORCH_XLA, code_of, is_removed, subtree

EXITS = {"sys.exit", "os._exit", "exit", "quit"}


class MultiprocessWorker(TargetRule):
    """The script's training code runs in ``def _mp_fn(index)``, launched by ``torch_xla.launch``.

    Guide, "Distributed Training" and its script structure: ``torch_xla.launch(_mp_fn)``
    under ``if __name__ == "__main__":`` starts one process per device and calls
    ``_mp_fn(index)`` in each. What moves into the worker: the body of the ``__main__``
    block (``main()`` stays the script's own function, now called from ``_mp_fn``) and
    every module-level statement of a flat script after its imports, so device queries
    and the model run in the workers, after the runtime started; the launched processes
    re-import the module (spawn), so module-level code must not touch the device.
    Imports, functions, classes and literal constants stay. Names the moved code binds
    and the module's functions read are declared ``global`` in the worker. Not converted,
    and flagged instead: a ``__main__`` block with an ``else``, or one that ends the
    process with a status (``sys.exit(main())``): the workers' return values are lost.
    A file without a ``__main__`` block or module-level training is a library: its
    training code is converted where it is (XLA650-XLA652), its structure is kept.

    PyTorch/XLA only: the worker is started by ``torch_xla.launch``, and ``--runtime torch-tpu``
    refuses ``--target multiprocess``.
    """

    CODE = "XLA659"
    NAME = "multiprocess-worker"
    SUMMARY = "the training script runs in def _mp_fn(index), launched by torch_xla.launch(_mp_fn)"
    FIX = SAFE
    TARGETS = ("multiprocess",)
    RUNTIMES = ("torch-xla",)
    TRIGGERS = (r"__main__|\.backward\(",)
    BEFORE = 'def main():\n    train()\n\n\nif __name__ == "__main__":\n    main()\n'
    AFTER = (
        "def main():\n    train()\n\n\ndef _mp_fn(index):\n    main()\n\n\n"
        'if __name__ == "__main__":\n    torch_xla.launch(_mp_fn)\n'
    )

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        # Classified on the migrated statements: earlier rules may have added some (XLA651
        # binds a dataset to a name), so positions in the original no longer line up.
        if self.skip:
            return updated
        body = updated.body
        last_import = max((i for i, s in enumerate(body) if is_import_line(s)), default=-1)
        moved = [i for i, s in enumerate(body) if i > last_import and not self._stays(s, i) and not is_removed(s)]
        guard = [i for i in moved if is_main_guard(body[i])]
        trains = any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward"
            for i in moved
            if i not in guard
            for n in subtree(body[i])
        )
        if not guard and not trains:
            return updated  # a library module: nothing of it runs on its own
        report_at = next((s for s in original.body if is_main_guard(s)), None) if guard else None
        report_at = report_at or next(s for s in original.body if not (self._stays(s, 1) or is_main_guard(s)))
        problem = self._problem(body, guard)
        if problem is not None:
            self.ctx.statements.append(report_at)
            self.flag(report_at, problem)
            self.ctx.statements.pop()
            at = guard[0] if guard else moved[0]
            return updated.with_changes(body=[*body[:at], self.ctx.attach_todos(report_at, body[at]), *body[at + 1 :]])
        worker: list[cst.BaseStatement] = []
        for i in moved:
            for statement in body[i].body.body if i in guard else [body[i]]:
                # blank lines go (the worker is one block), comments stay with their statement
                worker.append(
                    statement.with_changes(leading_lines=[line for line in statement.leading_lines if line.comment])
                )
        shared = self._globals([body[i] for i in moved], [s for i, s in enumerate(body) if i not in moved])
        if shared:
            worker.insert(0, parse_statement(f"global {', '.join(shared)}"))
        function = cst.FunctionDef(
            name=cst.Name(WORKER),
            params=cst.Parameters(params=[cst.Param(cst.Name("index"))]),
            body=cst.IndentedBlock(body=worker),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )
        launch = parse_statement(f'if __name__ == "__main__":\n    torch_xla.launch({WORKER})\n').with_changes(
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()]
        )
        kept = [s for i, s in enumerate(body) if i not in moved]
        return self.replace(
            report_at,
            updated,
            updated.with_changes(body=[*kept, function, launch]),
            f"the training code runs in `def {WORKER}(index)`, one process per device, launched by "
            f'`torch_xla.launch({WORKER})` under `if __name__ == "__main__":`',
            imports=[TORCH_XLA],
        )

    @staticmethod
    def _stays(statement: cst.BaseStatement, index: int) -> bool:
        """Imports, definitions, the docstring, literal constants and loggers stay at module level."""
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or is_import_line(statement):
            return True
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)) else None
            if value is None or (isinstance(small, cst.Expr) and index > 0):
                return False
            if not (_literal(value) or (isinstance(value, cst.Call) and code_of(value.func) == "logging.getLogger")):
                return False
        return True

    def _problem(self, body: Sequence[cst.BaseStatement], guard: list[int]) -> str | None:
        for i in guard:
            statement = body[i]
            if statement.orelse is not None:
                return (
                    "the `__main__` block has an `else`: move its code into a `main()` to run it in `torch_xla.launch`"
                )
            for node in subtree(statement.body):
                ends = isinstance(node, cst.Raise) and node.exc is not None and "SystemExit" in code_of(node.exc)
                ends = ends or isinstance(node, cst.Call) and (self.qualname(node.func) or code_of(node.func)) in EXITS
                if ends:
                    return (
                        "the `__main__` block ends the process with a status; under `torch_xla.launch` "
                        "the workers' return values are lost: launch `def _mp_fn(index)` and exit after it"
                    )
        return None

    @staticmethod
    def _globals(moved: Sequence[cst.CSTNode], kept: Sequence[cst.CSTNode]) -> list[str]:
        """Names the moved code binds at module level that the functions staying there read."""
        bound = set()
        for statement in moved:
            if isinstance(statement, cst.If) and is_main_guard(statement):
                statements = statement.body.body
            else:
                statements = [statement]
            for s in statements:
                bound.update(
                    node.name.value for node in subtree(s) if isinstance(node, (cst.FunctionDef, cst.ClassDef))
                )
                bound.update(assigned_names(s))
        read = set()
        for definition in kept:
            if isinstance(definition, (cst.FunctionDef, cst.ClassDef)):
                own = {p.name.value for p in subtree(definition) if isinstance(p, cst.Param)}
                read |= {n.value for n in subtree(definition.body) if isinstance(n, cst.Name)} - own
        return sorted(bound & read)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _literal(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _literal(e.key) and _literal(e.value) for e in node.elements)
    return False
