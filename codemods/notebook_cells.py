"""XLA0xx: findings about the input itself rather than a pattern of the migration guide.

These rules do not act in the traversal (their trigger never matches a script): the
reader that met the problem reports it under the rule's code, so ``--select``,
``--ignore``, ``per-file-ignores``, ``explain`` and the rule documentation treat it like
any other finding.
"""

from __future__ import annotations

from migrate_xla.rule.api import CELL_NOT_MIGRATED, Rule

NEVER = r"\A(?!)"  # a pattern that matches no text (at once: \A stops the search at the start)


class CellNotMigrated(Rule):
    """A notebook code cell that is not Python is left exactly as it is, and reported.

    A notebook is migrated as one program of its code cells (they share one namespace).
    IPython lines (``%matplotlib inline``, ``!nvidia-smi``, ``x = !ls``, ``obj?``) and
    cells opening with ``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug`` or
    ``%%memit`` are migrated around; cells in another language (``%%bash``, ``%%html``)
    are skipped like markdown. What remains is a cell whose text is not Python even so: a
    syntax error, or a cell magic such as ``%%writefile`` or ``%%script`` whose body does
    not run as Python in the notebook. Such a cell is kept out of the program, so the
    other cells are still migrated, and this finding (a warning: it does not change the
    exit code) says where and why: fix the syntax error and run again, or migrate what the
    cell writes or runs by hand (a file written by ``%%writefile`` can be migrated as a
    script of its own).
    """

    CODE = CELL_NOT_MIGRATED
    NAME = "cell-not-migrated"
    SUMMARY = "a notebook code cell that is not Python (a syntax error, %%writefile, %%script) is left as it is"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (NEVER,)
    # A notebook cell, not a script: tests/test_codemods.py migrates it as a one-cell notebook.
    BEFORE = "%%writefile train.py\nmodel = Net().cuda()\n"
    AFTER = "%%writefile train.py\nmodel = Net().cuda()\n"
