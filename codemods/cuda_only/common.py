"""What the XLA8xx rules share: the documents their messages cite, the test for a
message (a string printed or logged, which no rule rewrites), ``CudaOnlyApi``, the
base of the rules that flag an API with no XLA counterpart (XLA801-XLA809), and
``Mirrored``, which writes ``torch.cuda.X`` as ``torch.tpu.X`` under TorchTPU."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from codemods.shared.statements import dotted
from migrate_xla.rule.api import RUNTIME, SAFE, FileContext, Import, Rule, code_of, parse_expr, snippet

GUIDE = "https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html"
# What the messages cite under --runtime torch-tpu: TorchTPU's own page (its PyPI project),
# and PyTorch's documents of what TorchTPU runs as PyTorch does
TPU_GUIDE = "https://pypi.org/project/torch-tpu/"
TPU_AMP_GUIDE = "https://docs.pytorch.org/docs/stable/amp.html"
TPU_PROFILING_DOC = "https://docs.pytorch.org/docs/stable/profiler.html"
TPU_COMPILE_DOC = "https://docs.pytorch.org/docs/stable/generated/torch.compile.html"
TPU_PALLAS_DOC = "https://docs.jax.dev/en/latest/pallas/index.html"
TPU_COMPILE_BACKEND = RUNTIME["torch-tpu"].compile_backend  # torch.compile(..., backend="tpu")

# Calls whose string arguments are messages, not devices: print("cuda"), logger.info("cuda").
MESSAGE_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log", "write"}


def is_message_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and func.attr.value in MESSAGE_METHODS


PROFILING_DOC = "https://cloud.google.com/tpu/docs/pytorch-xla-performance-profiling-tpu-vm"
PALLAS_DOC = "https://docs.pytorch.org/xla/master/features/pallas.html"
DYNAMO_DOC = "https://docs.pytorch.org/xla/master/perf/dynamo.html"


def holds_import(statement: cst.CSTNode) -> bool:
    """A line with an import among its statements (``import cupy; x = 1``): nothing on it
    is flagged, the API's uses are. Not shared/statements.py's ``is_import_line`` (a line
    of imports only)."""
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


class CudaOnlyApi(Rule):
    """Base of the rules that flag an API with no XLA counterpart: one finding a statement.

    ``APIS`` maps qualified names (a name also covers its attributes; a key ending in
    ``.`` is a module prefix) to what the message says after the name: what it is and
    what to do instead. The most specific key wins. Imports are not flagged: they are
    removed once nothing uses them, and neither are type annotations. With ``TRACK``, a
    name bound to the result of calling one of the APIs (``start = torch.cuda.Event()``,
    ``self.stream = torch.cuda.Stream()``), or a function a flagged decorator made, is
    flagged where it is used (``start.record()``). The table is by name: a plain name
    bound in a function is forgotten when the function ends, ``self.x`` and module-level
    names last for the file, and a name assigned anything else is forgotten.
    """

    FIX = None
    SEVERITY = "error"
    APIS: ClassVar[dict[str, str]] = {}
    # what the messages say on another runtime than PyTorch/XLA, by runtime (``torch-tpu``) and
    # key of APIS; a key missing there says what APIS says
    RUNTIME_APIS: ClassVar[dict[str, dict[str, str]]] = {}
    TRACK: ClassVar[bool] = False
    SKIP_INSIDE: ClassVar[bool] = False  # statements nested in a flagged one are not flagged again

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flagged: dict[int, str] = {}  # statement id -> the API it was flagged for
        self.tracked: dict[str, str] = {}  # local name -> the API its value came from
        self.scopes: list[list[str]] = []  # names tracked in each enclosing function
        self.annotations = 0  # depth inside type annotations, which are not uses
        self.not_references: set[int] = set()  # names that bind or are attributes, not references
        self.keys = sorted(self.APIS, key=len, reverse=True)
        self.roots = {key.split(".")[0] for key in self.APIS}  # a quick no for most names

    def api_of(self, name: str | None) -> str | None:
        if name is None or name.split(".", 1)[0] not in self.roots:
            return None
        for key in self.keys:
            stem = key.rstrip(".")
            if name == stem or name.startswith(f"{stem}."):
                return key
        return None

    def accept(self, node: cst.CSTNode) -> bool:
        """Whether a reference to an API is reported (a rule that converts some says no)."""
        return True

    def converts(self, node: cst.CSTNode, api: str) -> bool:
        """Whether a reference to ``api`` is converted rather than flagged (``Mirrored``)."""
        return False

    def hint(self, api: str) -> str:
        """What the finding on ``api`` says after its name, on this run's runtime."""
        return self.RUNTIME_APIS.get(self.ctx.runtime, {}).get(api) or self.APIS[api]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_references.add(id(node.attr))
        self._check(node)

    def visit_Name(self, node: cst.Name) -> None:
        if self.tracked or node.value in self.ctx.aliases:  # else neither an API's name nor a tracked one
            self._check(node)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_references.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_references.add(id(node.name))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.not_references.add(id(node.target))  # `start = time.perf_counter()` rebinds, it does not use

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.not_references.add(id(node.name))
        self.scopes.append([])

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.annotations += 1

    def leave_Annotation(self, original, updated):
        self.annotations -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.not_references.add(id(node.name))

    def _check(self, node: cst.Name | cst.Attribute) -> None:
        if id(node) in self.not_references or self.annotations or not self.ctx.statements:
            return
        api = self.api_of(self.qualname(node))
        source = None
        if api is None:
            source = self.tracked.get(dotted(node) or "") if self.tracked else None
            if source is None:
                return
        statement = self.ctx.statements[-1]
        converted = api is not None and not holds_import(statement) and self.converts(node, api)
        if not converted and (id(statement) in self.flagged or holds_import(statement)):
            return
        inner = node.value if isinstance(node, cst.Attribute) else None
        while isinstance(inner, (cst.Attribute, cst.Name)):  # `torch.cuda` of `torch.cuda.Stream`
            self.not_references.add(id(inner))
            inner = inner.value if isinstance(inner, cst.Attribute) else None
        if converted or not self.accept(node):
            return
        if self.SKIP_INSIDE and any(id(s) in self.flagged for s in self.ctx.statements[:-1]):
            return
        if source is not None:
            message = f"`{dotted(node)}` holds a `{source}`, which {self.hint(self.api_of(source))}"
        else:
            message = self.message(node, api)
        self.flagged[id(statement)] = source or self.qualname(node) or ""
        self.flag(node, message)

    def message(self, node: cst.CSTNode, api: str) -> str:
        """What the finding on a reference to ``api`` says."""
        return f"`{snippet(node)}` {self.hint(api)}"

    def leave_SimpleStatementLine(self, original, updated):
        if self.TRACK:
            flagged_for = self.flagged.get(id(original))
            for small in original.body:
                targets = (
                    [t.target for t in small.targets]
                    if isinstance(small, cst.Assign)
                    else [small.target]
                    if isinstance(small, cst.AnnAssign)
                    else []
                )
                value = getattr(small, "value", None)
                made = (
                    flagged_for is not None and isinstance(value, cst.Call) and self.qualname(value.func) == flagged_for
                )
                for target in targets:
                    name = dotted(target)
                    if name is None:
                        continue
                    if made:
                        self._track(name, flagged_for)
                    else:
                        self.tracked.pop(name, None)
        return updated

    def _track(self, name: str, api: str) -> None:
        if "." in name or not self.scopes:
            self.ctx.need_whole_module(name.rsplit(".", 1)[-1])  # it lasts for the file: uses a slice left out
        self.tracked[name] = api
        if self.scopes and "." not in name:
            self.scopes[-1].append(name)

    def leave_FunctionDef(self, original, updated):
        for name in self.scopes.pop():
            self.tracked.pop(name, None)
        if self.TRACK and id(original) in self.flagged:
            self._track(original.name.value, self.flagged[id(original)])
        return updated


def torch_spelling(ctx: FileContext) -> tuple[str, list[Import]]:
    """How this file spells ``torch`` (``t`` after ``import torch as t``), and the import a
    replacement needs when the file does not import torch itself."""
    local = ctx.binds("torch")
    return (local, []) if local else ("torch", [Import("torch")])


class Mirrored(CudaOnlyApi):
    """A ``CudaOnlyApi`` whose references are converted where the run's runtime mirrors them:
    under TorchTPU, ``torch.cuda.X`` becomes ``torch.tpu.X`` where ``torch.tpu`` has ``X``
    (``ctx.api.mirror``); the rest is flagged. ``t.cuda.Stream`` keeps the file's ``t``;
    a name imported from ``torch.cuda`` is spelled from ``torch``, and its import goes once
    unused. ``MIRRORED`` says why, after the arrow of the finding."""

    FIX = SAFE
    MIRRORED: ClassVar[str] = ""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.mirrors: dict[int, str] = {}  # id(reference) -> its torch.tpu name

    def converts(self, node: cst.CSTNode, api: str) -> bool:
        name = self.qualname(node) or ""
        rest = name.removeprefix("torch.cuda.streams.").removeprefix("torch.cuda.")
        if not self.ctx.api.module or rest == name or "." in rest:  # the module itself, or an attribute of X
            return False
        target = self.ctx.api.mirror(f"torch.cuda.{rest}")
        if target is None:
            return False
        self.mirrors[id(node)] = target
        return True

    def _mirror(self, original: cst.CSTNode, updated: cst.CSTNode):
        target = self.mirrors.pop(id(original), None)
        if target is None:
            return updated
        module = self.ctx.api.module or ""
        head, last = module.rpartition(".")[2], target.rpartition(".")[2]
        imports: list[Import] = []
        value = original.value if isinstance(original, cst.Attribute) else None
        if isinstance(value, cst.Attribute) and self.qualname(value) == "torch.cuda":  # t.cuda.X: t.tpu.X
            replacement = updated.with_changes(value=updated.value.with_changes(attr=cst.Name(head)))
        else:
            torch, imports = torch_spelling(self.ctx)
            replacement = parse_expr(f"{torch}.{module.partition('.')[2]}.{last}")
            replacement = replacement.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{code_of(replacement)}`: {self.MIRRORED}",
            imports=imports,
            drop_if_unused=self.ctx.import_behind(original),
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        return self._mirror(original, updated) if self.mirrors else updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        return self._mirror(original, updated) if self.mirrors else updated
