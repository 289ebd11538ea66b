"""XLA109: modules moved to the XLA device (or TorchTPU's, under ``--runtime torch-tpu``)
keep their ``Parameter`` objects (``torch.__future__.set_swap_module_params_on_conversion(True)``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from codemods.shared.device_values import is_cuda_value, is_other_device, names_device, target_name
from codemods.shared.statements import is_docstring, is_import_line
from migrate_xla.rule.api import (
    SAFE,
    TORCH,
    FileContext,
    Rule,
    call_arg,
    code_of,
    parse_expr,
    snippet,
    string_value,
    subtree,
    words,
)

SWAP_SWITCH = "torch.__future__.set_swap_module_params_on_conversion"

# What a moved value is taken for a module by (besides `Net().to(device)` and a move whose
# result is dropped, `model.cuda()`): its name.
MODULE_NAME = re.compile(
    r"model|net|module|encoder|decoder|generator|discriminator|critic|classifier|backbone|layer|block"
    r"|transformer|gpt|bert|ema|teacher|student|policy|actor|head|embed|rnn|lstm|gru|cnn|mlp|^[gdm]$",
    re.IGNORECASE,
)
DEVICE_WORD = re.compile(r"(^|_)(dev|rank|gpu|gpu_id)$", re.IGNORECASE)
MOVES = frozenset({"to", "cuda"})
# Models whose weights are tied (an LM head sharing the input embedding): moved without the
# switch they come apart, so a kept forward pass before their move is flagged, not worked around
TIED_MODEL = re.compile(r"LM\b|LMHead|ConditionalGeneration|ForPreTraining")
TIE_ASSIGNMENT = re.compile(r"\.weight\s*=\s*[\w.\[\]]+\.weight\b")
KEPT_LINE = re.compile(r"^([ \t]*)[\w.,() \t]+=([^=\n][^\n]*)", re.M)  # outputs = model(**batch)
CALLED = re.compile(r"\b(\w+)\(")
CALL = re.compile(r"\b(\w+)\s*\(")  # model(, with the spaces Python allows
MOVE = re.compile(r"\b(\w+)\s*\.\s*(?:to|cuda)\s*\(")  # model.to(, model . cuda (
MOVE_LINE = re.compile(r"^([ \t]*)(?:\w+[ \t]*=[ \t]*)?(\w+)\.(?:to|cuda)\(", re.M)  # model.to(, m = m.cuda(


@dataclass
class KeptForward:
    """A module moved after a forward pass whose output the code keeps (``outputs = model(**batch)``
    before ``model.to(device)``: the Hugging Face course's loop): the output's graph holds the
    parameters, so swapping them raises ("_apply(): Couldn't swap LayerNorm.weight")."""

    name: str  # the module's variable
    forward: cst.SimpleStatementLine  # the statement that ran the module and keeps the output
    takes: cst.SimpleStatementLine | None = None  # the first statement after it that takes the parameters
    movable: bool = True  # the move can go before `takes`: nothing between runs or moves the module
    tied: bool = False  # its weights may be tied (TIED_MODEL, TIE_ASSIGNMENT): the switch keeps them


def kept_forwards(block: cst.Module | cst.IndentedBlock, source: str) -> dict[int, KeptForward]:
    """The moves in ``block`` (by the id of their call) made after a kept forward pass of the
    moved module in the same block: a statement ``name.to(...)`` / ``name.cuda(...)`` (its
    result dropped or assigned) after an assignment whose value calls ``name(...)``."""
    found: dict[int, KeptForward] = {}
    body = list(block.body)
    moves = [(at, call) for at, call in ((at, _move_of(s)) for at, s in enumerate(body)) if call is not None]
    if not moves:
        return found
    kept_calls = [_kept_calls(s) for s in body]  # the names each line runs and keeps the output of
    assigned: list[set[str]] = []  # the names each line assigns, read once the block has a kept forward pass
    code = _Codes(body)
    deleted = {  # line -> the names a `del` line deletes
        i: {n for small in s.body if isinstance(small, cst.Del) for n in _targets_of(small.target)}
        for i, s in enumerate(body)
        if isinstance(s, cst.SimpleStatementLine) and any(isinstance(small, cst.Del) for small in s.body)
    }
    for at, call in moves:
        name = call.func.value.value
        forward = next((i for i in range(at - 1, -1, -1) if name in kept_calls[i]), None)
        if forward is None:
            continue
        span = range(forward + 1, at)
        targets = _targets(body[forward])
        if any(deleted.get(i, set()) & targets for i in span):
            continue  # `del outputs` before the move: the graph is gone, the switch works
        assigned = assigned or [_targets(s) for s in body]
        built = next((i for i in range(forward - 1, -1, -1) if name in assigned[i]), None)
        tied = bool(TIE_ASSIGNMENT.search(source)) or (built is not None and bool(TIED_MODEL.search(code(built))))
        kept = KeptForward(name, body[forward], tied=tied)
        found[id(call)] = kept
        if any(m.func.value.value == name for i, m in moves if forward < i < at):
            continue  # moved already (the move this rule adds before an optimizer): nothing to do here
        taking = next((i for i in span if re.search(rf"\b{name}\.(named_)?parameters\(", code(i))), None)
        if taking is not None:
            kept.takes = body[taking]
            kept.movable = isinstance(kept.takes, cst.SimpleStatementLine) and not any(
                _calls(body[i], name) or re.search(r"\.(to|cuda)\(", code(i)) for i in range(taking, at)
            )
    return found


def _may_move_after_forward(source: str) -> bool:
    """Whether the text has a move ``name.to(`` / ``name.cuda(`` after a call ``name(``: what
    ``kept_forwards`` looks for, decided from the text before the tree is walked (one pass for
    where each name is first called)."""
    first_call: dict[str, int] = {}
    for call in CALL.finditer(source):
        first_call.setdefault(call[1], call.start())
    return any(first_call.get(move[1], len(source)) < move.start() for move in MOVE.finditer(source))


class _Codes:
    """The code of a block's lines, each generated once, when first asked for."""

    def __init__(self, body: list) -> None:
        self.body, self.codes = body, {}

    def __call__(self, i: int) -> str:
        if i not in self.codes:
            self.codes[i] = code_of(self.body[i])
        return self.codes[i]


def _move_of(statement: cst.CSTNode) -> cst.Call | None:
    """The call of ``name.to(...)`` / ``name.cuda(...)`` that ``statement`` is, or assigns."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in MOVES
        and isinstance(value.func.value, cst.Name)
    ):
        return None
    return value


def _targets(statement: cst.CSTNode) -> set[str]:
    """The names a statement line assigns (``outputs = ...``, ``a, b = ...``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    found = set()
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                found |= _targets_of(target.target)
        elif isinstance(small, cst.AnnAssign):
            found |= _targets_of(small.target)
    return found


def _targets_of(node: cst.CSTNode) -> set[str]:
    return {n.value for n in subtree(node) if isinstance(n, cst.Name)}


def _calls(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name for n in subtree(node))


def _kept_calls(statement: cst.CSTNode) -> set[str]:
    """The names ``statement`` calls in a value it assigns: ``outputs = model(**batch)``, ``loss =
    model(x).loss`` keep the output of ``model``."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    return {
        n.func.value
        for s in statement.body
        if isinstance(s, (cst.Assign, cst.AnnAssign)) and s.value is not None
        for n in subtree(s.value)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
    }


DDP_CLASSES = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    }
)


class SwapModuleParams(Rule):
    """Modules moved to the XLA device keep their ``Parameter`` objects.

    On CUDA, ``model.cuda()`` / ``model.to(device)`` changes each parameter in place
    (``param.data = ...``): the ``Parameter`` objects stay. CPU to XLA is not such a move,
    so torch_xla 2.9 puts a *new* ``Parameter`` in the module. Whatever held the old
    objects now holds stale CPU tensors, silently: an optimizer, scheduler, EMA copy or
    parameter list built before the move (a Trainer given an optimizer before it calls
    ``model.cuda(gpu_id)``, a layer that builds ``self.opt = Adam(self.parameters())`` in
    ``__init__``) updates tensors the model no longer uses, so the model never learns;
    and weights tied by assignment (``self.wte.weight = self.lm_head.weight``) come
    apart into two trained copies.

    ``torch.__future__.set_swap_module_params_on_conversion(True)`` makes ``Module._apply``
    swap each new tensor into the old ``Parameter`` (``torch.utils.swap_tensors``), so
    every holder sees the device tensor, whatever the order of construction. Measured on
    torch_xla 2.9, CPU PJRT: an AdamW built before the move trains to the CPU losses
    (without it the loss never moves), a tied embedding stays one parameter, a model run
    before the move and wrapped in DDP after it trains the same; nothing changes per step.
    The switch is global: it is added once, after the imports of each file that moves a
    module (``.cuda()``, or ``.to(<device>)`` on something taken for a module), so it
    runs before the first move, also in processes ``torch_xla.launch`` starts.

    What it changes besides: a move raises ("_apply(): Couldn't swap") instead of
    copying when something else holds the parameter's tensor (a weak reference, such as
    ``torch.compile``'s on a model compiled and run before the move; a view of the
    parameter; the autograd graph of an output kept from before the move). And
    ``load_state_dict`` swaps too, so it raises ("Expected use_count of t1 to be 1 or 2")
    while DistributedDataParallel holds the parameters: a load after the DDP wrap is an
    error-level finding (load before wrapping). A file that turns the switch off is one
    too. See torch.__future__ and torch.utils.swap_tensors in the PyTorch reference.

    A module run before its move, its output kept (the Hugging Face course's loop: ``outputs
    = model(**batch)`` on a ``from_pretrained`` BERT, the optimizer and scheduler built, then
    ``model.to(device)``), is such a case: the output's autograd graph holds the parameters
    (the LayerNorm backward saves its weight besides the gradient's accumulator, so its
    tensor has three users where ``swap_tensors`` allows two), and the move raised
    "_apply(): Couldn't swap LayerNorm.weight". There the file gets no switch, and where
    something takes the parameters between that forward pass and the move (``optimizer =
    AdamW(model.parameters())``), the module moves to the device just before it
    (``model.to(torch_xla.device())``; the later move keeps the parameters, already on the
    device), provided nothing between runs or moves the module; otherwise the move is
    flagged, and so is a model whose weights may be tied (an LM head: ``...ForMaskedLM``,
    ``...LMHeadModel``, ``...ForConditionalGeneration``; a file that ties ``.weight`` by
    assignment), which only the switch keeps together. A ``del`` of the output before the
    move frees the graph: the switch then works. Measured on CPU PJRT with a tiny ``BertForSequenceClassification`` loaded with
    ``from_pretrained``: the swap raises as in the course; moved before the optimizer, it
    trains to the CPU losses.

    Under ``--runtime torch-tpu`` as well: TorchTPU's device is PyTorch's privateuse1
    backend, and ``Module._apply`` keeps a ``Parameter`` (``param.data = ...``) only where
    ``torch._has_compatible_shallow_copy_type(param, moved)`` holds, which c10 grants a CPU
    tensor with CUDA, MPS, HIP, XPU, HPU and MTIA tensors but not with privateuse1 ones
    (``TensorImpl::has_compatible_shallow_copy_type``; a backend may register its own
    kernel for it, and torch_tpu 0.2.0's wheel has none). So ``model.to("tpu")`` puts new
    ``Parameter`` objects in the module, as on XLA, and the switch keeps the old ones.
    """

    CODE = "XLA109"
    NAME = "swap-module-params"
    SUMMARY = "files that move modules to the XLA device swap parameters on conversion (keeps optimizers and ties)"
    FIX = SAFE
    SEVERITY = "error"  # what stays is what the switch breaks
    TRIGGERS = (r"\.cuda\(", r"\.to\(")
    REQUIRES = (r"cuda|xla|accelerator",)  # torch.accelerator too: its device becomes torch_xla.device()
    CONTEXT = (words("set_swap_module_params_on_conversion", "load_state_dict", "DistributedDataParallel"),)
    BEFORE = "import torch\n\nmodel = GPT(config)\noptimizer = torch.optim.AdamW(model.parameters())\nmodel.cuda()\n"
    AFTER = (
        "import torch\n\n"
        "torch.__future__.set_swap_module_params_on_conversion(True)\n\n"
        "model = GPT(config)\n"
        "optimizer = torch.optim.AdamW(model.parameters())\n"
        "model.cuda()\n"  # XLA103 makes it model.to(torch_xla.device())
    )

    @classmethod
    def whole_module(cls, text: str, settings) -> bool:
        """A module moved after a kept forward pass (``kept_forwards``) is found in its block, which
        a slice may cut: the file is not sliced where a line moves a name that an earlier line of the
        same indentation runs and keeps (``outputs = model(**batch)`` ... ``model.to(device)``)."""
        moves = [(m.start(), m.group(1), m.group(2)) for m in MOVE_LINE.finditer(text)]
        if not moves:
            return False
        first_kept: dict[tuple[str, str], int] = {}  # (indentation, name) -> where a line first keeps its call
        for line in KEPT_LINE.finditer(text):
            for name in CALLED.findall(line.group(2)):
                first_kept.setdefault((line.group(1), name), line.start())
        return any(first_kept.get((indent, name), start) < start for start, indent, name in moves)

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.first_move: cst.Call | None = None
        self.first_move_top: cst.CSTNode | None = None  # the top-level statement that holds it
        self.cuda_move = False  # a move to CUDA (.cuda(), .to("cuda")) is among them
        self.switch: bool | None = None  # the file's own setting, when it has one
        self.wrapped = False  # a DistributedDataParallel wrap came before, in code order
        self.may_move = False  # the text may move a module after a kept forward pass
        self.kept: dict[int, KeptForward] = {}  # moves after a kept forward pass, by call
        self.early: dict[int, KeptForward] = {}  # statements the module moves before, by id
        self.first_kept: KeptForward | None = None  # the first move's, when it has one: no switch

    def visit_Module(self, node: cst.Module) -> None:
        self.may_move = _may_move_after_forward(self.ctx.source)
        self._read_kept(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._read_kept(node)

    def _read_kept(self, block: cst.Module | cst.IndentedBlock) -> None:
        """The block's moves after a kept forward pass, read as the traversal enters it (each
        is acted on inside it): no walk of the whole file of its own."""
        if self.may_move:
            kept = kept_forwards(block, self.ctx.source)
            self.kept.update(kept)
            self.early.update({id(k.takes): k for k in kept.values() if k.takes is not None and k.movable})

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func)
        if name == SWAP_SWITCH:
            value = call_arg(node, 0, "value")
            self.switch = not (value is not None and isinstance(value.value, cst.Name) and value.value.value == "False")
            if not self.switch and self.first_move is not None:
                self._flag_switched_off(node)
            return
        if name in DDP_CLASSES:
            self.wrapped = True
            return
        func = node.func
        if not isinstance(func, cst.Attribute) or name is not None:
            return
        swapping = self.switch or (self.switch is None and self.first_move is not None)
        if func.attr.value == "load_state_dict" and self.wrapped and swapping and self._is_module(func.value):
            self.flag(
                node,
                f"`{snippet(node)}` after the model was wrapped in DistributedDataParallel: with parameters "
                "swapped on conversion, load_state_dict swaps them too and raises while DDP holds "
                'them ("Expected use_count of t1 to be 1 or 2"); load the state dict before the DDP wrap',
            )
        elif self._moves_module(node):
            if func.attr.value == "cuda" or any(is_cuda_value(a.value) for a in node.args):
                self.cuda_move = True
            kept = self.kept.get(id(node))
            if self.first_move is not None:
                if kept is not None and self.first_kept is None and self.switch is not False:
                    self._flag_kept_forward(node, kept)  # swapped, since an earlier move set the switch
                return
            self.first_move = node
            self.first_move_top = self.ctx.statements[0]
            if self.switch is False:
                self._flag_switched_off(node)
            elif kept is not None and self.switch is None:
                if kept.tied or (kept.takes is not None and not kept.movable):
                    self._flag_kept_forward(node, kept)
                else:
                    self.first_kept = kept
                    if kept.takes is None:
                        self.note(
                            node,
                            f"`{snippet(node)}`: no parameter swapping in this file: `{snippet(kept.forward.body[0])}` ran the "
                            "module before the move and keeps its graph, which holds the parameters: swapping them "
                            "would raise",
                        )

    def _flag_kept_forward(self, node: cst.CSTNode, kept: KeptForward) -> None:
        self.flag(
            node,
            f"`{snippet(node)}` after `{snippet(kept.forward.body[0])}` ran the module and kept its output: its graph holds "
            'the parameters, so swapping them on conversion raises ("_apply(): Couldn\'t swap")'
            + (
                ", and without swapping its tied weights would come apart; move the module before running it"
                if kept.tied
                else "; move the module before running it or before anything takes its parameters"
            )
            + ", or `del` the output before the move",
        )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        kept = self.early.get(id(original))
        if kept is None or kept.tied or self.first_move is not None or self.switch is not None:
            return updated  # a move came first: the switch is added for it, and the later one is flagged
        code = f"{kept.name}.to({self.ctx.api.device})"
        # at the end of the statements before (the forward pass's paragraph, or notebook cell): the
        # comments above the statement stay its own
        early = cst.SimpleStatementLine([cst.Expr(parse_expr(code))])
        lines = cst.FlattenSentinel([early, updated])
        if (
            self.replace(
                original,
                updated,
                lines,
                f"`{code}` added before `{snippet(original.body[0])}`: `{snippet(kept.forward.body[0])}` ran the module and keeps its "
                'output, whose graph holds the parameters, so they cannot be swapped on conversion ("_apply(): '
                "Couldn't swap\"); moved before anything takes them, the optimizer holds the device's parameters, "
                "and the later move keeps them",
                imports=self.ctx.api.imports,
            )
            is not lines
        ):
            return updated
        return cst.FlattenSentinel([early, self.ctx.attach_todos(original, updated)])

    def _flag_switched_off(self, node: cst.CSTNode) -> None:
        self.flag(
            node,
            f"`{snippet(node)}`: this file turns parameter swapping off, so a module moved to {self._device_named()} "
            "gets new Parameter objects: optimizers built before the move update stale CPU "
            "tensors and tied weights come apart; move the module before anything holds its parameters",
        )

    def _device_named(self) -> str:
        """The device moves go to, as messages name it."""
        return "the XLA device" if self.ctx.runtime == "torch-xla" else "TorchTPU's device"

    def _moves_module(self, call: cst.Call) -> bool:
        """``model.cuda()``, ``Net().to(device)``, ``self.model.to(device)`` (matched by shape)."""
        method = call.func.attr.value
        if method == "to":
            where = call_arg(call, 0, "device")
            if where is None or not self._names_device(where.value):
                return False
        elif method != "cuda":
            return False
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        result_dropped = isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Expr) and small.value is call for small in statement.body
        )
        return result_dropped or self._is_module(call.func.value)

    def _is_module(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Call):  # Net(...).to(device), nn.Linear(2, 2).cuda()
            name = self.qualname(value.func) or code_of(value.func)
            last = name.rsplit(".", 1)[-1]
            return last[:1].isupper() and not last.endswith("Tensor") and not name.startswith("torch.Tensor")
        return bool(MODULE_NAME.search(target_name(value)))

    def _names_device(self, value: cst.BaseExpression) -> bool:
        """A device the migration moves to: a CUDA one, or one named like a device.

        Not an explicit XLA device (``torch_xla.device()``, ``"xla"``; ``torch.device("tpu")``
        under torch-tpu): code already written for XLA is its author's, and the migrated
        moves were ``.cuda()`` or CUDA names when this rule saw them."""
        if is_cuda_value(value):
            return True
        if isinstance(value, cst.IfExp):
            return self._names_device(value.body) or self._names_device(value.orelse)
        if isinstance(value, cst.Call):
            kind = call_arg(value, 0, "type") if self.qualname(value.func) == "torch.device" else None
            written_for = ("xla", self.ctx.api.device_type)
            return kind is not None and not is_other_device(kind.value) and string_value(kind.value) not in written_for
        name = target_name(value)
        return names_device(name) or bool(DEVICE_WORD.search(name))

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.first_move is None or self.switch is not None or self.first_kept is not None:
            return updated
        if not self.cuda_move and not any(p.fixed for p in self.ctx.pending):
            return updated  # nothing else migrated: code already written for XLA is its author's
        # After the last import line before the top-level statement that holds the first
        # move: every move runs after that statement starts (a move in a function runs
        # only once the function is defined), so after the switch.
        before = original.body[: next(i for i, s in enumerate(original.body) if s is self.first_move_top)]
        anchors = [s for s in before if is_import_line(s)]
        body = list(updated.body)
        at = 0
        if anchors:
            at = next((i + 1 for i, s in enumerate(body) if s is anchors[-1]), None)
            if at is None:  # a rule changed an import line: cannot happen (imports are scheduled)
                return updated
        else:
            while at < len(body) and is_docstring(body[at]):
                at += 1
        switch = cst.SimpleStatementLine(
            body=[cst.Expr(parse_expr(f"{SWAP_SWITCH}(True)"))],
            leading_lines=[cst.EmptyLine()] if at else [],
        )
        if at < len(body) and not body[at].leading_lines:
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])
        body.insert(at, switch)
        return self.replace(
            self.first_move,
            updated,
            updated.with_changes(body=body),
            f"`{snippet(self.first_move)}` moves a module to {self._device_named()}, where it would get new "
            f"Parameter objects: `{SWAP_SWITCH}(True)` added before it runs, so optimizers built "
            "before the move and tied weights keep them (matched by shape)",
            imports=[TORCH],
        )
