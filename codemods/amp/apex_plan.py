"""What XLA408 (apex_amp.py) decides about a file before the traversal: the plan.

Which of apex's amp calls the rule answers for (``handled``), which ``with amp.scale_loss``
blocks go, whether each ``amp.initialize`` goes (and its opt level) or stays flagged with
why, and which forward passes go into bfloat16 autocast: the forward pass is usually below
``amp.initialize``, in another function, so the whole file is read first."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.amp.apex_conversions import bfloat16_autocast, parts
from codemods.amp.common import CUDA_AUTOCAST, DEVICE_AUTOCAST, amp_guide, device_word, torch_module
from codemods.shared.statements import carried_name
from codemods.shared.training_loops import calls_training_step
from migrate_xla.rule.api import FileContext, call_arg, children, code_of, snippet, string_value, subtree


def _apex(*names: str) -> frozenset[str]:
    """``apex.amp.X`` and where apex defines it (``apex/amp/__init__.py`` re-exports them)."""
    return frozenset(
        f"apex.amp{module}.{name}" for name in names for module in ("", ".frontend", ".handle", "._amp_state")
    )


INITIALIZE = _apex("initialize")
SCALE_LOSS = _apex("scale_loss")
MASTER_PARAMS = _apex("master_params")
STATE_DICT = _apex("state_dict")
LOAD_STATE_DICT = _apex("load_state_dict")
# apex.amp.frontend.initialize(models, optimizers=None, enabled=True, opt_level="O1", cast_model_type=None,
# patch_torch_functions=None, keep_batchnorm_fp32=None, master_weights=None, loss_scale=None,
# cast_model_outputs=None, num_losses=1, verbosity=1, min_loss_scale=None, max_loss_scale=2.**24)
INITIALIZE_PARAMETERS = (
    "models",
    "optimizers",
    "enabled",
    "opt_level",
    "cast_model_type",
    "patch_torch_functions",
    "keep_batchnorm_fp32",
    "master_weights",
    "loss_scale",
    "cast_model_outputs",
    "num_losses",
    "verbosity",
    "min_loss_scale",
    "max_loss_scale",
)
# What an opt level's own precision override changes beyond "float16 autocast": a person decides
PRECISION_OVERRIDES = ("cast_model_type", "patch_torch_functions", "cast_model_outputs")
# Statements under which a statement does not always run, up to its function
_CONDITIONAL = (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.Finally, cst.While, cst.For, cst.IfExp)


@dataclass
class ForwardPass:
    """The statements of a block that compute a loss ``amp.scale_loss`` scales: ``block.body[first:last + 1]``."""

    block: cst.CSTNode
    first: int
    last: int
    loss: str
    wrap: bool = False  # not already in autocast: it goes into one


@dataclass
class ApexPlan:
    """What XLA408 does in one file, decided before the traversal (the forward pass is usually
    below ``amp.initialize``, in another function)."""

    handled: set[int] = field(default_factory=set)  # ids of the apex references this rule answers for
    scale_loss: dict[int, cst.Call] = field(default_factory=dict)  # id(With) -> its scale_loss call
    initialize: dict[int, str] = field(default_factory=dict)  # id(amp.initialize call) -> why it stays (flagged)
    forwards: dict[int, list[ForwardPass]] = field(default_factory=dict)  # id(block) -> the forwards to wrap
    level: dict[int, str] = field(default_factory=dict)  # id(initialize call) -> its opt level, for messages


def _paths(root: cst.CSTNode):
    """Every node under ``root`` in code order with all its ancestors, nearest first."""
    stack: list[tuple[cst.CSTNode, tuple]] = [(root, ())]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        inner = (node, *ancestors)
        stack.extend((child, inner) for child in reversed(children(node)))


class ApexPlanner:
    """Reads the file once, before the traversal: the apex calls, the forward passes, the plan."""

    def __init__(self, ctx: FileContext, module: cst.Module) -> None:
        self.ctx, self.plan = ctx, ApexPlan()
        self.names = FileContext()  # the traversal has not learned the imports yet
        initializes, withs = self._find(module)
        for with_, call, _ in withs:
            self.plan.scale_loss[id(with_)] = call
            self.plan.handled.add(id(call.func))
        self.scale_loss_withs = {id(w) for w, _, _ in withs}
        self.models = {key for call, ancestors in initializes for key in self._models(call, ancestors)}
        forwards = [self._forward(with_, call, ancestors) for with_, call, ancestors in withs]
        for call, ancestors in initializes:
            self.plan.handled.add(id(call.func))  # converted, or flagged by this rule
            why = self._initialize(call, ancestors, len(initializes), forwards)
            if why is None:
                self.plan.handled.add(id(call))
                for forward in forwards if self.plan.level[id(call)] in ("O1", "O2") else ():
                    if forward is not None and forward.wrap:
                        self.plan.forwards.setdefault(id(forward.block), []).append(forward)
            else:
                self.plan.initialize[id(call)] = why

    def _find(self, module: cst.Module) -> tuple[list, list]:
        """The file's ``amp.initialize`` calls and ``with amp.scale_loss(...)`` statements XLA408
        converts, each with its ancestors; the other apex calls it answers for go in ``plan.handled``."""
        initializes: list[tuple[cst.Call, tuple]] = []
        withs: list[tuple[cst.With, cst.Call, tuple]] = []
        for node, ancestors in _paths(module):
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self.names.learn_import(node)
                continue
            if not isinstance(node, cst.Call):
                continue
            name = self.names.qualname(node.func)
            parent = ancestors[0] if ancestors else None
            if name in INITIALIZE:
                initializes.append((node, ancestors))
            elif name in SCALE_LOSS:
                with_ = ancestors[1] if len(ancestors) > 1 else None
                if isinstance(parent, cst.WithItem) and isinstance(with_, cst.With) and self._unscaled(with_, node):
                    withs.append((with_, node, ancestors[2:]))
            elif name in MASTER_PARAMS:
                if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                    self.plan.handled.add(id(node.func))
            elif name in STATE_DICT and not node.args:
                self.plan.handled.add(id(node.func))
                if isinstance(parent, cst.DictElement) and parent.value is node:
                    self.plan.handled.add(id(node))  # the checkpoint's entry goes
                elif (
                    isinstance(parent, cst.Assign)
                    and parent.value is node
                    and all(isinstance(t.target, cst.Subscript) for t in parent.targets)
                ):
                    self.plan.handled.add(id(node))  # checkpoint["amp"] = amp.state_dict() goes
            elif name in LOAD_STATE_DICT and isinstance(parent, cst.Expr) and parent.value is node:
                self.plan.handled.update((id(node), id(node.func)))
        return initializes, withs

    def _unscaled(self, with_: cst.With, call: cst.Call) -> bool:
        """``with amp.scale_loss(loss, optimizer) as scaled_loss:``, alone in its ``with``."""
        asname = with_.items[0].asname
        return (
            len(with_.items) == 1
            and not any(a.star for a in call.args)
            and call_arg(call, 0, "loss") is not None
            and (asname is None or isinstance(asname.name, cst.Name))
            and not with_.asynchronous
        )

    def _models(self, call: cst.Call, ancestors: tuple) -> list[str]:
        """The names of the models ``amp.initialize`` is given and those it returns them as."""
        found: list[cst.CSTNode] = []
        models = call_arg(call, 0, "models")
        if models is not None:
            found.append(models.value)
        parent = ancestors[0] if ancestors else None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            optimizers = call_arg(call, 1, "optimizers")
            if optimizers is not None and isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                target = target.elements[0].value
            found.append(target)
        keys = []
        for node in found:
            keys.extend(key for key in map(carried_name, parts(node)) if key is not None)
        return keys

    def _calls_model(self, statement: cst.CSTNode) -> bool:
        for node in subtree(statement):
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                    func = func.value
                if carried_name(func) in self.models:
                    return True
        return False

    def _forward(self, with_: cst.With, call: cst.Call, ancestors: tuple) -> ForwardPass | None:
        """The statements of the ``with``'s block that compute the loss it scales: from the
        first call of a model to the last assignment of the loss, after any earlier backward
        pass or optimizer step of the block (a GAN's two losses). None when it is not there."""
        block = ancestors[0] if ancestors else None
        loss = carried_name(call_arg(call, 0, "loss").value)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or loss is None:
            return None
        at = next(i for i, s in enumerate(block.body) if s is with_)
        last = next((i for i in range(at - 1, -1, -1) if _assigns(block.body[i], loss)), None)
        if last is None:
            return None
        start = 0
        for i in range(last):
            if calls_training_step(block.body[i]) or id(block.body[i]) in self.scale_loss_withs:
                start = i + 1
        first = next((i for i in range(start, last + 1) if self._calls_model(block.body[i])), None)
        if first is None:
            return None
        statements = block.body[first : last + 1]
        if any(calls_training_step(s) for s in statements):
            return None
        forward = ForwardPass(block, first, last, loss)
        if not any(self._in_autocast(s) for s in statements):  # already autocast: nothing to add
            forward.wrap = True
        return forward

    def _in_autocast(self, statement: cst.CSTNode) -> bool:
        """``with torch.autocast(...):`` (or CUDA's): the user's autocast already."""
        return isinstance(statement, cst.With) and any(
            isinstance(item.item, cst.Call) and self.names.qualname(item.item.func) in CUDA_AUTOCAST | DEVICE_AUTOCAST
            for item in statement.items
        )

    def _initialize(self, call: cst.Call, ancestors: tuple, count: int, forwards: list) -> str | None:
        """None when ``amp.initialize`` goes (its opt level in ``plan.level``), else the finding that keeps it."""
        if any(a.star for a in call.args) or any(
            a.keyword is not None and a.keyword.value not in INITIALIZE_PARAMETERS for a in call.args
        ):
            return self._kept(call, "its arguments are not all in sight")
        parent = ancestors[0] if ancestors else None
        if (
            not ((isinstance(parent, cst.Assign) and len(parent.targets) == 1) or isinstance(parent, cst.Expr))
            or parent.value is not call
        ):
            return self._kept(call, "its result is used inside an expression")
        enabled = call_arg(call, 2, "enabled")
        if enabled is not None and code_of(enabled.value) == "False":
            self.plan.level[id(call)] = "disabled"
            return None
        if enabled is not None and code_of(enabled.value) != "True":
            return self._kept(call, f"`enabled={code_of(enabled.value)}` is chosen at run time")
        level_arg = call_arg(call, 3, "opt_level")
        level = "O1" if level_arg is None else string_value(level_arg.value)
        if level not in ("O0", "O1", "O2", "O3"):
            return self._kept(call, f"its opt level is chosen at run time (`{code_of(level_arg.value)}`)")
        self.plan.level[id(call)] = level
        if level == "O0":
            return None
        if level == "O3":
            return self._kept(call, "O3 trains the whole model in float16 (apex calls `.half()` on it)")
        overrides = [a for a in call.args if a.keyword is not None and a.keyword.value in PRECISION_OVERRIDES]
        if overrides:
            return self._kept(call, f"`{code_of(overrides[0])}` overrides the precision of {level}".replace(" =", "="))
        if any(isinstance(a, _CONDITIONAL) for a in self._scope(ancestors)):
            return self._kept(call, "it runs only under a condition (a loop, a branch, a try)")
        if count > 1:
            return self._kept(call, f"it is called {count} times in this file")
        if not forwards or any(f is None for f in forwards):
            return self._kept(
                call,
                "xla-migrate finds no forward pass to put in autocast (the statements that compute the loss "
                "`amp.scale_loss` scales, from a call of the model it was given, in the block of that `with`)",
            )
        return None

    @staticmethod
    def _scope(ancestors: tuple):
        for node in ancestors:
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return
            yield node

    def _kept(self, call: cst.Call, reason: str) -> str:
        ctx = self.ctx
        torch = torch_module(ctx)[0]
        autocast = f"`with {bfloat16_autocast(ctx)}:`"
        level = self.plan.level.get(id(call))
        if level in ("O1", "O2"):
            todo = f"put the forward pass in {autocast}"
        elif level == "O3":
            todo = (
                f"choose its bfloat16 counterpart: `model.to({torch}.bfloat16)` (the whole model in bfloat16, "
                f"as O3 has it in float16) or the forward pass in {autocast}"
            )
        else:
            todo = (
                f"put the forward pass of O1 / O2 in {autocast} (O0 is float32; for O3's float16 model, "
                f"`model.to({torch}.bfloat16)` or that autocast)"
            )
        return (
            f"`{snippet(call)}` is apex mixed precision and {reason}: remove it (without apex it returns its "
            f"models and optimizers as they are) and {todo}; {device_word(ctx)} autocast computes in bfloat16, "
            f"which needs no loss scaling; see {amp_guide(ctx)}"
        )


def _assigns(statement: cst.CSTNode, key: str) -> bool:
    """Whether a line assigns ``key`` (``loss = ...``, ``loss, acc = ...``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
        if isinstance(small, cst.AnnAssign):
            targets = [small.target]
        if any(carried_name(part) == key for target in targets for part in parts(target)):
            return True
    return False
