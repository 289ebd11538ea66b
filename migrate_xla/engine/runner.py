"""Every woken rule in one traversal of the tree (docs/design.md, step 6 of the pipeline)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache

import libcst as cst

from migrate_xla.engine import branches
from migrate_xla.engine.slicing import Slice
from migrate_xla.rule.api import FileContext, Rule
from migrate_xla.rule.removed_lines import drop_removed_lines, removed_line, tidy_line
from migrate_xla.rule.tree import LEAVES, NODE_TYPES, STATEMENTS, TRIVIA, Transformer


class RuleRunner:
    """Runs the visit/leave methods of many rules in one traversal, in rule order.

    It also keeps the import-alias table (imports are seen before the code that uses
    them) and the stack of enclosing statements that TODO comments attach to. The
    traversal is ``tree.Transformer``'s: LibCST's ``CSTTransformer`` rebuilds every node
    of the file, this one only those whose children changed, and it does not enter
    layout (whitespace, brackets, operators) nor leaves (names, literals) that no rule looks at.
    """

    def __init__(self, ctx: FileContext, rules: Sequence[Rule], piece: Slice | None = None) -> None:
        self.ctx = ctx
        self.piece = piece
        self.visitors: dict[str, list[Callable]] = defaultdict(list)
        self.leavers: dict[str, list[Callable]] = defaultdict(list)
        for rule in rules:
            for name in _hooks(type(rule)):
                kind, _, node_type = name.partition("_")
                table = self.visitors if kind == "visit" else self.leavers
                table[node_type].append(getattr(rule, name))
        self.skip = (TRIVIA | LEAVES) - {getattr(cst, name, None) for name in (*self.visitors, *self.leavers)}
        # the hooks by node type (matched by name, as LibCST does), and the node types whose
        # on_visit / on_leave do anything: the traversal calls them for those only
        self.visit_of = {t: tuple(self.visitors[t.__name__]) for t in NODE_TYPES if t.__name__ in self.visitors}
        self.leave_of = {t: tuple(self.leavers[t.__name__]) for t in NODE_TYPES if t.__name__ in self.leavers}
        self.visits = frozenset(self.visit_of) | _IMPORTS | STATEMENTS
        self.leaves = frozenset(self.leave_of) | STATEMENTS | _LEFT
        # the blocks of the `if` statements whose branches the fixes made one (branches.py), by
        # id (the block: a rule that moves the `if` elsewhere, XLA659, may give it new leading
        # lines); held, so that no other node takes the id of one while the file is migrated
        self.collapsed: dict[int, cst.BaseSuite] = {}
        self.qualname = branches.qualname_in(ctx)

    def run(self, module: cst.Module) -> cst.Module:
        # A Transformer made here and dropped: kept as an attribute, it and this runner (whose
        # methods it holds) would be a cycle, holding both trees until the cyclic collector ran.
        module = Transformer(self.on_visit, self.on_leave, self.skip, self.visits, self.leaves).transform(module)
        if self.collapsed:  # a rule moved the `if` out of the block it was left in (XLA659's worker)
            module = Transformer(_visit_nothing, self._flatten_blocks, TRIVIA).transform(module)
        return module

    # Exact type checks: isinstance against LibCST's abstract bases is slow, and this
    # runs on every node of every parsed file.
    def on_visit(self, node: cst.CSTNode) -> bool:
        node_type = type(node)
        if node_type in _IMPORTS:
            self.ctx.learn_import(node)
        if node_type in STATEMENTS:
            self.ctx.statements.append(node)
            if self.piece is not None and node_type is cst.SimpleStatementLine:
                self._learn_skipped(node)
        for visit in self.visit_of.get(node_type, ()):
            visit(node)
        return True

    def _learn_skipped(self, line: cst.SimpleStatementLine) -> None:
        """A slice's placeholder: the imports of the code it stands for, learned in place."""
        value = getattr(line.body[0], "value", None)
        index = Slice.placeholder_index(value.value) if type(value) is cst.Name else None
        if index is not None:
            for module, names in self.piece.skipped[index].imports:
                self.ctx.learn_names(module, names)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        node_type = type(original)
        for leave in self.leave_of.get(node_type, ()):
            updated = leave(original, updated)
            if type(updated) is not node_type:
                break  # replaced by another kind of node, or removed: later rules do not apply
        if node_type in STATEMENTS:
            self.ctx.statements.pop()
            if type(updated) is cst.SimpleStatementLine:
                updated = tidy_line(original, updated)
            if type(updated) in STATEMENTS:
                updated = self.ctx.attach_todos(original, updated)
            if type(updated) is cst.If:
                updated = self._collapse(original, updated)
        elif type(updated) in (cst.Module, cst.IndentedBlock):
            updated = drop_removed_lines(self._flatten(updated))
        elif node_type is cst.IfExp and type(updated) is cst.IfExp:
            if branches.collapsible_ifexp(original, updated, self.qualname):
                updated = branches.ifexp_branch(updated)
        return updated

    def _collapse(self, original: cst.If, updated: cst.If) -> cst.If:
        """Notes an ``if`` whose branches the fixes made the same code, or whose block they emptied
        (its ``else`` too, or it has none); its block puts the branch in its place (a removed line
        for ``pass``), once the rules have left that block (migrate_xla/engine/branches.py)."""
        if type(updated.orelse) is cst.If and self.collapsed.pop(id(updated.orelse.body), None) is not None:
            updated = updated.with_changes(orelse=branches.as_else(updated.orelse))  # the last `elif`
        updated = branches.without_emptied_else(original, updated)
        if branches.collapsible_if(original, updated, self.qualname) or branches.emptied_if(
            original, updated, self.qualname
        ):
            self.collapsed[id(updated.body)] = updated.body
        return updated

    def _flatten(self, block):
        """``block`` with each collapsed ``if`` replaced by its branch's statements; a branch
        of nothing but ``pass`` goes as a removed line does."""
        if not self.collapsed or not any(type(s) is cst.If and id(s.body) in self.collapsed for s in block.body):
            return block
        body: list[cst.BaseStatement] = []
        for statement in block.body:
            if type(statement) is not cst.If or self.collapsed.pop(id(statement.body), None) is None:
                body.append(statement)
                continue
            statements = branches.branch_statements(statement)
            if all(_is_pass(s) for s in statements):
                statements = [removed_line(statement.leading_lines)]
            body.extend(statements)
        return block.with_changes(body=body)

    def _flatten_blocks(self, original: cst.CSTNode, updated: cst.CSTNode):
        if type(updated) in (cst.Module, cst.IndentedBlock):
            return drop_removed_lines(self._flatten(updated))
        return updated


_IMPORTS = frozenset({cst.Import, cst.ImportFrom})
# what on_leave tends besides the statements and the rules' hooks: blocks, conditional expressions
_LEFT = frozenset({cst.Module, cst.IndentedBlock, cst.IfExp})


def _is_pass(statement: cst.BaseStatement) -> bool:
    return (
        type(statement) is cst.SimpleStatementLine
        and all(type(small) is cst.Pass for small in statement.body)
        and statement.trailing_whitespace.comment is None
    )


def _visit_nothing(node: cst.CSTNode) -> bool:
    return True


@cache
def _hooks(cls: type[Rule]) -> tuple[str, ...]:
    return tuple(
        name
        for name in dir(cls)
        if (name.startswith("visit_") or name.startswith("leave_")) and callable(getattr(cls, name))
    )
