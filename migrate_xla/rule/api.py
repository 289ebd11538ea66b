"""What a rule is, what it reports, and the helpers every rule shares: the rule API.

A rule is a small LibCST transformer fragment: it defines ``visit_<Node>`` and
``leave_<Node>`` methods like a ``libcst.CSTTransformer``, and the engine runs all
enabled rules together in one traversal of the tree (``RuleRunner``, migrate_xla/engine/runner.py).
Rules never edit imports by hand: they schedule them through ``FileContext``.

The public names of this module are all that a rule (``codemods/``) imports from
``migrate_xla``; some are defined elsewhere and given to the rules here (the words of a
run's contract from findings.py, node types from tree.py, the removed-line placeholders
from removed_lines.py, the YAML line editor from yaml_lines.py). tests/test_architecture.py
checks it.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

import libcst as cst

from migrate_xla.generated import xla_ops  # noqa: F401 (the rules' names: what the installed torch_xla can run, generated)
from migrate_xla.rule.findings import (  # noqa: F401 (the rules' names)
    ACCELERATE_CONFIG,
    CELL_NOT_MIGRATED,
    CUDA_REFERENCE_LEFT,
    LIGHTNING_CONFIG,
    RUNTIMES,
    SAFE,
    SEVERITIES,
    TARGETS,
    UNSAFE,
    Diagnostic,
)
from migrate_xla.rule.removed_lines import drop_removed_lines, is_removed  # noqa: F401 (the rules' names)
from migrate_xla.rule.runtimes import PL, RUNTIME, TORCH, TORCH_XLA, XM, XR, Import, Runtime  # noqa: F401 (the rules' names)
from migrate_xla.rule.settings import Settings
from migrate_xla.rule.tree import NODE_TYPES, TRIVIA, children, codegen, name_uses, subclasses  # noqa: F401 (the rules' names)
from migrate_xla.rule.yaml_lines import Edit, Entry  # noqa: F401 (the config rules' line editor)

TODO_PREFIX = "# TODO(xla-migrate): "


class Rule:
    """Base class of every rule; subclasses live in ``codemods/<family>.py`` or, for a family
    of many rules, in the modules of the package ``codemods/<family>/``.

    Class attributes every rule sets: ``CODE`` (``XLA101``), ``NAME``
    (``cuda-device``), ``SUMMARY`` (one line), ``FIX`` (``"safe"``, ``"unsafe"`` or
    ``None`` for report-only), ``TRIGGERS`` (regexes; the rule runs on a file only
    if one of them occurs in it, and a file that wakes no enabled rule is never
    parsed: so they must be a necessary condition for the rule to report or fix
    anything, however the code spelled or imported the names), ``REQUIRES`` (optional
    regexes that must each occur as well: a second necessary condition, such as
    ``cuda`` for a rule on ``torch.cuda.Stream`` whose TRIGGERS name ``Stream``), ``SEVERITY`` of what stays after
    the fix, ``TARGETS`` (the ``--target`` values that enable the rule: every one
    unless a rule belongs to one target's whole-script form), ``RUNTIMES`` (the runtimes
    the rule serves, ``Settings.runtime``: every one unless it is one runtime's own), and ``BEFORE`` /
    ``AFTER`` examples (``xla-migrate explain`` prints them and a test migrates
    ``BEFORE`` and expects ``AFTER``). The docstring says
    why, naming the migration-guide section or PyTorch/XLA document it follows.
    """

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    FIX: ClassVar[str | None] = None
    SEVERITY: ClassVar[str] = "warning"
    # An unsafe fix held back (--unsafe-fixes off) is a hint, as ruff's are, unless the code it
    # leaves trains otherwise than on the GPU or cannot run on the device: then its finding
    # is marked in the code with a TODO, as what cannot be converted is (issue 31, class 3).
    MARK_HELD_BACK: ClassVar[bool] = False
    TRIGGERS: ClassVar[Sequence[str]] = ()
    REQUIRES: ClassVar[Sequence[str]] = ()
    # Big files are parsed as a slice (migrate_xla.engine.slicing): the top-level statements and
    # class members where a woken rule's TRIGGERS or CONTEXT occur. CONTEXT: what the rule
    # learns from beyond the code it acts on. WHOLE_MODULE: the rule needs every statement
    # (``whole_module``: or what the file's text says it will).
    CONTEXT: ClassVar[Sequence[str]] = ()
    WHOLE_MODULE: ClassVar[bool] = False
    TARGETS: ClassVar[Sequence[str]] = TARGETS
    RUNTIMES: ClassVar[Sequence[str]] = RUNTIMES
    BEFORE: ClassVar[str] = ""
    AFTER: ClassVar[str] = ""
    EXAMPLE_LANGUAGE: ClassVar[str] = "python"  # what BEFORE and AFTER are written in (XLA827: YAML)

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @classmethod
    def why(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def whole_module(cls, text: str, settings: Settings) -> bool:
        """Whether the rule will need every statement of the file ``text``, so that it is not
        sliced: ``WHOLE_MODULE``, or what a rule that asks for the whole file while it runs
        (``FileContext.need_whole_module``) tells from the text, where a slice it gave up
        would cost its parse twice."""
        return cls.WHOLE_MODULE

    @property
    def fixing(self) -> bool:
        """Whether this rule's fix is applied in this run."""
        return self.FIX == SAFE or (self.FIX == UNSAFE and self.ctx.unsafe_fixes)

    # -- reporting ---------------------------------------------------------
    def replace(
        self,
        original: cst.CSTNode,
        updated: cst.CSTNode,
        replacement: cst.CSTNode | cst.RemovalSentinel,
        message: str,
        imports: Iterable[Import] = (),
        drop_if_unused: Iterable[Import] = (),
    ):
        """Report ``original`` and, when this rule's fixes are on, return ``replacement``.

        ``imports`` are added for the replacement; ``drop_if_unused`` are removed when the
        replacement left them unused. A replacement built anew rather than from
        ``updated`` first calls ``ctx.forget_fixes_inside(original)``.
        """
        applied = self.ctx.report(
            self,
            original,
            message,
            fixed=self.fixing,
            imports=tuple(imports) if self.fixing else (),
            drops=tuple(drop_if_unused) if self.fixing else (),
        )
        return replacement if applied else updated

    def fixes(self, original: cst.CSTNode) -> bool:
        """Whether this rule's fix is applied at ``original``: its fixes are on and no
        suppression comment covers it there (migrate_xla/engine/suppression.py). A rule
        whose fix edits more than the node it reports asks this before each edit."""
        return self.fixing and not self.ctx.silenced(self.CODE, original)

    def suppressed(self, original: cst.CSTNode) -> bool:
        """Whether a suppression comment covers this rule at ``original``; if so, the
        finding counts as suppressed. For a decision taken before the finding is reported
        (a plan made when a loop is entered, carried out as its body is left)."""
        if not self.ctx.silenced(self.CODE, original):
            return False
        self.ctx.report(self, original, self.SUMMARY, fixed=False)
        return True

    def flag(self, original: cst.CSTNode, message: str) -> None:
        """Report what cannot be converted, with one TODO comment above its statement."""
        self.ctx.report(self, original, message, fixed=False, todo=True)

    def note(self, original: cst.CSTNode, message: str) -> None:
        """Report without a fix and without a comment (hints, guesses worth reviewing)."""
        self.ctx.report(self, original, message, fixed=False)

    # -- lookups -------------------------------------------------------------
    def qualname(self, node: cst.CSTNode) -> str | None:
        return self.ctx.qualname(node)


def words(*names: str) -> str:
    """A trigger matching any of ``names`` as a whole word. Written ``name(?<!\\wname)\\b``
    rather than ``\\bname\\b``: a pattern that starts with ``\\b`` makes Python's ``re``
    try every position of the file, one that starts with a literal lets it skip to the
    literal's occurrences (5 to 100 times faster on torch's sources)."""
    return "(?:" + "|".join(rf"{re.escape(name)}(?<!\w{re.escape(name)})" for name in names) + r")\b"


def names_trigger(*qualnames: str) -> str:
    """A trigger for rules that act on these qualified names (``torch.cuda.Stream``, or a
    prefix ``torch.cuda.streams.``): their last parts as words. A name resolves to
    ``a.b.c`` only through an import and attribute chain that spells every part
    (``import torch as t; t.cuda.Stream``, ``from torch.cuda import Stream as S``), so
    the last part occurs as a word in any file that refers to it."""
    return words(*sorted({name.rstrip(".").rsplit(".", 1)[-1] for name in qualnames}))


# What may stand between two tokens: spaces, line breaks, continuations, comments (each to
# its line's end, so that a pattern cannot backtrack through a comment's spaces).
GAP = r"(?:[\s\\]|#[^\n]*\n)*"


def called(name_pattern: str) -> str:
    """A call of what ``name_pattern`` matches (``words(...)``): the name, then its call's ``(``
    (``mp.spawn(``, ``(xmp.spawn)(``), or ``as`` when it is imported under another name
    (``spawn as sp``), whose own calls then spell that name."""
    return name_pattern + r"(?:[\s\\)]|#[^\n]*\n)*(?:\(|as\b)"


# Any reference to torch.cuda (``torch.cuda.X``, ``from torch import cuda``, ``.cuda()``)
# spells the word ``cuda``, and so does a "cuda..." device string (is_cuda_literal).
CUDA_WORD = words("cuda")

# The rules that tune code for the XLA device (lazy execution, recompilation hazards,
# checkpoints, the --target forms; XLA302 has a narrower test of its own) act on a file that
# may run on an accelerator: one that names CUDA (``torch.cuda``, ``.cuda()``, ``"cuda:0"``,
# ``use_cuda``, ``CUDA_VISIBLE_DEVICES``), the XLA device (below; not ``xlabel``) or ``torch.accelerator``, or one that picks no device at all (a project's
# training module handed its device by the script that chose it). A file that picks the CPU
# (``torch.device("cpu")``, ``device = "cpu"``) and names no accelerator trains on the CPU
# and is left as it is. Rules that convert a CUDA API (devices, mixed precision, pinned
# memory, process groups, CUDA-only libraries) act wherever it is used. A migrated file
# names XLA, so a second run wakes the same rules.
# XLA counts as its device (``torch_xla.device()``, ``xm.xla_device()``, ``"xla"``, ``XLA_...``
# settings), not as any torch_xla name: what the fixes add to a CPU-only file (``xr.global_ordinal()``
# and its import, a ``TODO(xla-migrate): XLA608`` mark) must not open the gate on a second run.
NAMES_ACCELERATOR = r"cuda|CUDA|torch_xla\.device\b|xla_device|['\"]xla\b|XLA_|accelerator(?<!\waccelerator)\b"
ON_ACCELERATOR = NAMES_ACCELERATOR + r"""|\A(?![\s\S]*['"]cpu['"])"""


class WholeModuleNeeded(Exception):
    """A slice cannot give the same result as the whole file: the engine parses the whole file."""


@dataclass
class _Pending:
    """A finding before positions are known, with the imports its fix needs or frees."""

    rule: type[Rule]
    node: cst.CSTNode
    statement: cst.CSTNode | None
    message: str
    fixed: bool
    imports: tuple[Import, ...] = ()
    drops: tuple[Import, ...] = ()
    suppressed: bool = False  # covered by a suppression comment: neither fixed nor reported, counted
    around: tuple[cst.CSTNode, ...] = ()  # the statements around the node when it was reported


@dataclass
class FileContext:
    """Per-file state shared by the rules of one run: the run's settings (the file's own:
    migrate_xla/rule/settings.py), names, imports, findings."""

    settings: Settings = field(default_factory=Settings)
    aliases: dict[str, str] = field(default_factory=dict)
    bindings: dict[str, Import] = field(default_factory=dict)
    pending: list[_Pending] = field(default_factory=list)
    # the fixed findings of ``pending`` by id(node), so that forget_fixes_inside costs the
    # replaced subtree and the findings reported since, not every finding of the file
    fixed_at: dict[int, list[_Pending]] = field(default_factory=dict)
    statements: list[cst.CSTNode] = field(default_factory=list)
    todos: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    held_back: dict[int, bool] = field(default_factory=dict)  # by id(statement): whether its TODO marks a fix held back
    shared: dict[str, object] = field(default_factory=dict)  # analyses several rules share
    # the code a slice of the file left out (its skipped units' text, migrate_xla.engine.slicing); None
    # when the tree is the whole file
    left_out: str | None = None
    source: str = ""  # the code the tree was parsed from (the slice's, when sliced)
    # the file's suppression comments (engine/suppression.py's Suppressions), when it may have any
    suppressions: object | None = None
    # comment lines directly above a statement that the parser keeps elsewhere, by id(statement):
    # those above a module's first statement are in Module.header (comments_above_first)
    comments_above: dict[int, tuple[str, ...]] = field(default_factory=dict)

    # -- settings ------------------------------------------------------------
    @property
    def unsafe_fixes(self) -> bool:
        """Whether the run applies unsafe fixes (``settings.unsafe_fixes``)."""
        return self.settings.unsafe_fixes

    @property
    def target(self) -> str:
        """What the migrated code runs as (``settings.target``): single, multiprocess or spmd."""
        return self.settings.target

    @property
    def runtime(self) -> str:
        """What the migrated code runs on (``settings.runtime``): torch-xla or torch-tpu."""
        return self.settings.runtime

    @property
    def api(self) -> Runtime:
        """How the migrated code spells the runtime's device and services (migrate_xla/rule/runtimes.py)."""
        return RUNTIME[self.settings.runtime]

    # -- names ---------------------------------------------------------------
    def learn_import(self, node: cst.Import | cst.ImportFrom) -> None:
        """Record what the local names bound by an import statement refer to."""
        if isinstance(node, cst.ImportFrom) and (
            node.relative or node.module is None or isinstance(node.names, cst.ImportStar)
        ):
            return
        module = None if isinstance(node, cst.Import) else dotted_name(node.module)
        self.learn_names(module, [(dotted_name(a.name), _asname(a) if a.asname else None) for a in node.names])

    def learn_names(self, module: str | None, names: Iterable[tuple[str, str | None]]) -> None:
        """``import name as asname`` (``module`` None) or ``from module import name as asname``,
        for each pair; also what the imports of a unit left out of a slice bind."""
        for name, asname in names:
            if module is None:
                local = asname or name.split(".")[0]
                self.aliases[local] = name if asname else local
                self.bindings[local] = Import(name, asname=asname)
            else:
                local = asname or name
                self.aliases[local] = f"{module}.{name}"
                self.bindings[local] = Import(module, name, asname if asname != name else None)

    def need_whole_module(self, *names: str, defined: bool = False) -> None:
        """Called by a rule whose analysis needs code a slice may have left out; with ``names``,
        only code that spells one of them as a word (all a name's assignments and uses, all a
        function's calls spell it), or with ``defined``, only code that defines one (``def name``,
        ``class name``)."""
        if self.left_out is None:
            return  # the tree is the whole file
        if names:
            spelled = rf"(?:def(?<!\wdef)|class(?<!\wclass))[ \t]+{words(*names)}" if defined else words(*names)
            if not re.search(spelled, self.left_out):
                return
        raise WholeModuleNeeded

    def qualname(self, node: cst.CSTNode) -> str | None:
        """``t.cuda.is_available`` -> ``torch.cuda.is_available`` after ``import torch as t``."""
        parts: list[str] = []
        while type(node) is cst.Attribute:  # exact type checks: isinstance on LibCST's ABCs is slow
            parts.append(node.attr.value)
            node = node.value
        if type(node) is not cst.Name:
            return None
        head = self.aliases.get(node.value)
        if head is None:
            return None
        return ".".join([head, *reversed(parts)])

    def import_behind(self, node: cst.CSTNode) -> list[Import]:
        """The import that binds the name ``node`` starts from (``tc`` in ``tc.synchronize()``)."""
        while isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
            node = node.func if isinstance(node, cst.Call) else node.value
        spec = self.bindings.get(node.value) if isinstance(node, cst.Name) else None
        return [spec] if spec is not None else []

    def binds(self, qualified: str) -> str | None:
        """The local name that refers to ``qualified`` (a module or object), if any."""
        for local, target in self.aliases.items():
            if target == qualified:
                return local
        return None

    # -- imports -------------------------------------------------------------
    @property
    def imports_to_add(self) -> list[Import]:
        return _unique(spec for p in self.pending if p.fixed for spec in p.imports)

    @property
    def imports_to_remove(self) -> list[Import]:
        return _unique(spec for p in self.pending if p.fixed for spec in p.drops)

    # -- findings --------------------------------------------------------------
    def report(
        self,
        rule: Rule,
        node: cst.CSTNode,
        message: str,
        fixed: bool,
        todo: bool = False,
        imports: tuple[Import, ...] = (),
        drops: tuple[Import, ...] = (),
    ) -> bool:
        """Record a finding; whether its fix is applied (``fixed``, and no suppression comment covers it)."""
        statement = self.statements[-1] if self.statements else None
        if self.silenced(rule.CODE, node, statement):
            self.pending.append(
                _Pending(type(rule), node, statement, message, False, suppressed=True, around=tuple(self.statements))
            )
            self.suppressions.silenced_at(statement)
            return False
        item = _Pending(type(rule), node, statement, message, fixed, imports, drops, around=tuple(self.statements))
        self.pending.append(item)
        if fixed:
            self.fixed_at.setdefault(id(node), []).append(item)
        # A fix held back that leaves the training wrong is marked (Rule.MARK_HELD_BACK).
        held_back = not todo and not fixed and rule.FIX == UNSAFE and rule.MARK_HELD_BACK
        key = id(statement)
        # One TODO comment a statement: a second rule's finding is still reported. What
        # cannot be converted is marked rather than a fix held back on the same statement.
        if (todo or held_back) and statement is not None and (key not in self.todos or (todo and self.held_back[key])):
            self.todos[key] = [(rule.CODE, " ".join(message.split()))]
            self.held_back[key] = held_back
        return fixed

    def silenced(self, code: str, *nodes: cst.CSTNode | None) -> bool:
        """Whether a suppression comment covers ``code`` at the first of ``nodes`` one covers, or in the file."""
        return self.suppressions is not None and self.suppressions.silences(code, *nodes)

    def forget_fixes_inside(self, node: cst.CSTNode) -> None:
        """Drop the fixes made in ``node`` or below it (a rule is replacing it whole).

        They were reported while ``node`` was traversed, so they lie at the tail of
        ``pending``: only the tail from the earliest of them is rebuilt."""
        drop = {id(p) for n in subtree(node) for p in self.fixed_at.pop(id(n), ())}
        if not drop:
            return
        start, seen = len(self.pending), 0
        while seen < len(drop):
            start -= 1
            seen += id(self.pending[start]) in drop
        self.pending[start:] = [p for p in self.pending[start:] if id(p) not in drop]

    def attach_todos(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        """Put the TODO comments flagged inside ``original`` above it, once each."""
        entries = self.todos.pop(id(original), None)
        self.held_back.pop(id(original), None)
        if not entries or not hasattr(updated, "leading_lines"):
            return updated
        present = [
            *self.comments_above.get(id(original), ()),
            *(line.comment.value for line in updated.leading_lines if line.comment is not None),
        ]
        new_lines = [
            cst.EmptyLine(comment=cst.Comment(f"{TODO_PREFIX}{code} {message}"))
            for code, message in entries
            if not any(text.startswith(f"{TODO_PREFIX}{code}") for text in present)
        ]
        if not new_lines:
            return updated
        return updated.with_changes(leading_lines=[*updated.leading_lines, *new_lines])


def comments_above_first(module: cst.Module) -> dict[int, tuple[str, ...]]:
    """The comment lines directly above ``module``'s first statement, by its id: LibCST keeps
    them in the module's header, not in the statement's ``leading_lines``, when the file
    starts with a comment (``# title`` then ``# TODO(xla-migrate): ...`` then the statement;
    a notebook's first cell marker): a TODO put above that statement is found there on the
    next run, or it would be added again on every run."""
    if not module.body:
        return {}
    run: list[str] = []
    for line in module.header:
        run = [] if line.comment is None else [*run, line.comment.value]
    return {id(module.body[0]): tuple(run)} if run else {}


def _unique(items: Iterable) -> list:
    return list(dict.fromkeys(items))


def subtree(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """``node`` and every node below it, in code order."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def code_nodes(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """``node`` and every node below it but layout (``TRIVIA``: whitespace, comments,
    brackets, commas, operators, under which no name, call or statement lies), in code
    order: what a search of a whole module for names, calls or statements walks (layout is
    two thirds of a file's nodes)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend([child for child in reversed(children(node)) if type(child) not in TRIVIA])


def dotted_name(node: cst.CSTNode) -> str:
    """``torch.cuda`` for the Name/Attribute chain of an import."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")


def _asname(alias: cst.ImportAlias) -> str:
    assert alias.asname is not None
    name = alias.asname.name
    assert isinstance(name, cst.Name)
    return name.value


# -- helpers rules share ----------------------------------------------------------


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        return _plain_string(node.value)
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _plain_string(literal: str) -> str:
    """The value of a str literal, as ``ast.literal_eval`` gives it. That compiles the
    literal; a literal with no escapes, carriage returns or NULs is its text between the
    quotes, which is most of them."""
    start = 0
    while literal[start] not in "'\"":
        start += 1  # the prefix: r, u
    quote = 3 if literal[start : start + 3] == literal[start] * 3 else 1
    text = literal[start + quote : len(literal) - quote]
    if "\\" in text or "\r" in text or "\0" in text:
        value = ast.literal_eval(literal)
        return value if isinstance(value, str) else None
    return text


def call_arg(call: cst.Call, position: int | None, keyword: str | None) -> cst.Arg | None:
    """The argument passed at ``position`` or as ``keyword``, if any."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and position < len(positional):
        return positional[position]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return None


def drop_items(items: Sequence, drop) -> list:
    """``items`` (call arguments, dict or list elements) without those ``drop`` accepts.

    When the last item goes, the new last item takes its comma (and, for a call
    argument, the whitespace before ``)``), so a trailing comma and the layout of a
    call spread over several lines survive.
    """
    kept = [item for item in items if not drop(item)]
    if kept and items and kept[-1] is not items[-1]:
        last = items[-1]
        changes = {"comma": last.comma}
        if isinstance(last, cst.Arg) and isinstance(kept[-1], cst.Arg):
            changes["whitespace_after_arg"] = last.whitespace_after_arg
        kept[-1] = kept[-1].with_changes(**changes)
    return kept


def last_name(node: cst.CSTNode) -> str:
    """``optimizer`` for ``optimizer`` and ``self.optimizer``; empty for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def code_of(node: cst.CSTNode) -> str:
    """The source code of a node, for messages and templates."""
    return codegen(node)


# `keyword=value` with no spaces, as PEP 8 writes keyword arguments
EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


@lru_cache(maxsize=1024)
def parse_expr(code: str) -> cst.BaseExpression:
    """An expression node for ``code``; cached, since nodes are immutable and templates repeat."""
    return cst.parse_expression(code)


def snippet(node: cst.CSTNode, limit: int = 60) -> str:
    """``node``'s code on one line, shortened: what a message (and its TODO comment) quotes."""
    text = re.sub(r"\s*\n\s*", " ", code_of(node).strip())
    text = re.sub(r"([(\[{]) ", r"\1", re.sub(r",? ([)\]}])", r"\1", text))
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def find(node: cst.CSTNode, accept: Callable[[cst.CSTNode], bool]) -> cst.CSTNode | None:
    """The first node in ``node`` (itself included, pre-order) that ``accept`` takes."""
    for found in subtree(node):
        if accept(found):
            return found
    return None


def append_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``keyword=value`` added last, keeping a trailing comma and one argument a line."""
    new_arg = cst.Arg(value, keyword=cst.Name(keyword), equal=EQUAL)
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new_arg])
    last = args[-1]
    between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(last.comma, cst.Comma):  # the new argument takes the trailing comma
        new_arg = new_arg.with_changes(comma=last.comma)
        if isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
            between = cst.Comma(whitespace_after=call.whitespace_before_args)  # one argument a line
    elif len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        if isinstance(args[-2].comma.whitespace_after, cst.ParenthesizedWhitespace):
            between = args[-2].comma  # one argument a line, the last without a trailing comma
    new_arg = new_arg.with_changes(whitespace_after_arg=last.whitespace_after_arg)
    args[-1] = last.with_changes(comma=between, whitespace_after_arg=cst.SimpleWhitespace(""))
    return call.with_changes(args=[*args, new_arg])
