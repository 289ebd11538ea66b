"""The placeholder of a removed statement line, and how a block drops it.

A statement line whose every small statement a rule removed is kept as a placeholder
until its block is left, so that the lines above it that are not its own (a blank line,
a comment with a blank line under it: tree.lines_left_by) can move to the next statement
instead of vanishing with it (LibCST drops an empty line whole); the comment lines
directly above it are about it, and go with it.

The engine (migrate_xla/engine/runner.py) makes the placeholders and drops them when it leaves
a block. A rule that looks at the statements of a block before then sees them
(``is_removed``), and a rule that rebuilds a block drops them itself
(``drop_removed_lines``): both are part of the rule API (``migrate_xla.rule.api``).
"""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule.tree import lines_left_by

REMOVED = "__xla_migrate_removed__"


def tidy_line(original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
    """``updated`` as the rules left it: the placeholder if they removed every small
    statement, else without the semicolon its last small statement may have kept."""
    if len(updated.body) == len(original.body):
        return updated
    if not updated.body:
        return updated.with_changes(body=[cst.Expr(cst.Name(REMOVED))])
    last = updated.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(body=[*updated.body[:-1], last])


def removed_line(leading_lines) -> cst.SimpleStatementLine:
    """The placeholder of a statement a fix removed, with the lines above it."""
    return cst.SimpleStatementLine(body=[cst.Expr(cst.Name(REMOVED))], leading_lines=leading_lines)


def is_removed(statement: cst.BaseStatement) -> bool:
    """Whether ``statement`` is the placeholder of a line the rules removed."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.Name)
        and statement.body[0].value.value == REMOVED
    )


def drop_removed_lines(block):
    """``block`` (a module or an indented block) without its placeholders: the lines above
    each that are not its own go to the next statement, and a block left empty gets ``pass``."""
    if not any(is_removed(s) for s in block.body):
        return block
    body: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for statement in block.body:
        if is_removed(statement):
            carried.extend(lines_left_by(statement.leading_lines))  # its own comments go with it
            continue
        if carried:
            has_comment = any(line.comment is not None for line in carried)
            if has_comment or not statement.leading_lines:
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
            carried = []
        body.append(statement)
    if any(line.comment is not None for line in carried) or (not body and isinstance(block, cst.IndentedBlock)):
        body.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried))
    return block.with_changes(body=body)
