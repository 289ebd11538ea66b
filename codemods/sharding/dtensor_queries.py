"""XLA628: what a script asks FSDP2's modules and DTensor's tensors, in the one SPMD program."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, XS, StatementRule, imports_behind
from codemods.shared.definitions import Written
from codemods.shared.sharded_models import may_shard
from migrate_xla.rule.api import TORCH, TORCH_XLA, code_of, snippet, subtree, words

FSDP_MODULE = (
    "torch.distributed.fsdp.FSDPModule",
    "torch.distributed._composable.fsdp.FSDPModule",
    "torch.distributed.fsdp._fully_shard.FSDPModule",
    "torch.distributed.fsdp._fully_shard._fully_shard.FSDPModule",
)
# FSDP2's module methods that schedule its all-gathers by hand: the partitioner schedules them
SCHEDULING = {
    "unshard": "XLA's partitioner gathers each parameter where the step's graph needs it",
    "reshard": "XLA's partitioner frees a gathered parameter where the step's graph is done with it",
    "set_modules_to_forward_prefetch": "XLA schedules the all-gathers of the step's graph itself",
    "set_modules_to_backward_prefetch": "XLA schedules the all-gathers of the step's graph itself",
}
HELPER = "xla_placements"
HELPER_DEF = f'''
def {HELPER}(tensor):
    """DTensor's placements of a tensor of the SPMD program, read from the layout xla-migrate's
    marks keep (``xla_partition_spec``): for each axis of the global mesh, ``Shard(d)`` where it
    splits dimension ``d``, else ``Replicate()``. Written by xla-migrate (XLA628)."""
    from torch.distributed.tensor import Replicate, Shard

    spec = getattr(tensor, "xla_partition_spec", None) or ()
    mesh = xs.get_global_mesh()
    placements = []
    for axis in mesh.axis_names or range(len(mesh.mesh_shape)):
        split = [d for d, names in enumerate(spec) if axis == names or (isinstance(names, tuple) and axis in names)]
        placements.append(Shard(split[0]) if split else Replicate())
    return tuple(placements)
'''

DISTRIBUTE_TENSOR = ("torch.distributed.tensor.distribute_tensor", "torch.distributed._tensor.distribute_tensor")
LIKE = "xla_distribute_like"
LIKE_DEF = f'''
def {LIKE}(tensor, like):
    """DTensor's ``distribute_tensor(tensor, like.device_mesh, like.placements)`` in SPMD's form:
    ``tensor`` on the XLA device with the layout of the SPMD program's tensor ``like`` (its
    ``xla_partition_spec`` over the global mesh; whole where it has none). Written by xla-migrate
    (XLA628)."""
    tensor = tensor.to(torch_xla.device())
    spec = getattr(like, "xla_partition_spec", None)
    if spec is not None:
        xs.mark_sharding(tensor, xs.get_global_mesh(), spec)
        tensor.xla_partition_spec = spec
    return tensor
'''
# torch.distributed.checkpoint's state-dict setters, in SPMD's form: the one process holds the whole
# state, which each loads in the layouts of the program's own tensors
SET_MODEL, SET_OPTIM, SET_BOTH = "xla_set_model_state_dict", "xla_set_optimizer_state_dict", "xla_set_state_dict"
SET_MODEL_DEF = f'''
def {SET_MODEL}(model, model_state_dict, *, options=None):
    """torch.distributed.checkpoint's ``set_model_state_dict`` in SPMD's form: the one process holds
    the whole state dict (no broadcast from rank 0), and each of its tensors takes the place of the
    model's own, on the XLA device in that tensor's layout (a parameter on the meta device too:
    ``xla_fully_shard`` recorded its layout); ``options.strict`` is kept. Written by xla-migrate
    (XLA628)."""
    own = model.state_dict(keep_vars=True)
    loaded = {{}}
    for name, value in model_state_dict.items():
        like = own.get(name)
        if like is not None and torch.is_tensor(value):
            value = {LIKE}(value, like)
            if isinstance(like, torch.nn.Parameter):
                value = torch.nn.Parameter(value, requires_grad=like.requires_grad)
                if hasattr(like, "xla_partition_spec"):
                    value.xla_partition_spec = like.xla_partition_spec
        loaded[name] = value
    return model.load_state_dict(loaded, strict=options is None or options.strict, assign=True)
'''
SET_OPTIM_DEF = f'''
def {SET_OPTIM}(model, optimizers, optim_state_dict, *, options=None):
    """torch.distributed.checkpoint's ``set_optimizer_state_dict`` in SPMD's form: loaded by torch
    without the broadcast from rank 0 (the one process holds the whole state dict), each state
    tensor of a parameter's shape then laid out as the parameter is. Written by xla-migrate (XLA628)."""
    import dataclasses

    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    options = dataclasses.replace(options or StateDictOptions(), broadcast_from_rank0=False)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
        for param, state in optimizer.state.items():
            for key, value in state.items():
                if torch.is_tensor(value) and value.dim() > 0 and value.shape == param.shape:
                    state[key] = {LIKE}(value, param)
'''
SET_BOTH_DEF = f'''
def {SET_BOTH}(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """torch.distributed.checkpoint's ``set_state_dict`` in SPMD's form: ``{SET_MODEL}`` and
    ``{SET_OPTIM}``. Written by xla-migrate (XLA628)."""
    keys = {SET_MODEL}(model, model_state_dict, options=options)
    {SET_OPTIM}(model, optimizers, optim_state_dict, options=options)
    return keys
'''
SETTERS = {
    name: (f"torch.distributed.checkpoint.state_dict.{name}", helper)
    for name, helper in (
        ("set_model_state_dict", SET_MODEL),
        ("set_optimizer_state_dict", SET_OPTIM),
        ("set_state_dict", SET_BOTH),
    )
}
# the functions the rule writes into the file, and the written functions each calls
WRITTEN = {
    HELPER: HELPER_DEF,
    LIKE: LIKE_DEF,
    SET_MODEL: SET_MODEL_DEF,
    SET_OPTIM: SET_OPTIM_DEF,
    SET_BOTH: SET_BOTH_DEF,
}
CALLS = {SET_MODEL: (LIKE,), SET_OPTIM: (LIKE,), SET_BOTH: (SET_MODEL, SET_OPTIM, LIKE)}


class DTensorQueries(StatementRule):
    """``isinstance(model, FSDPModule)``, ``param.placements``, ``t.full_tensor()`` and FSDP2's
    hand scheduling (``model.unshard()``) in the SPMD program's terms.

    The SPMD program's parameters are whole tensors with XLA layouts (xla-migrate's marks keep
    each in ``xla_partition_spec``), its modules plain modules that XLA622's ``xla_fully_shard``
    was given (it keeps the call as ``xla_fully_sharded``). So what FSDP2 code asks of them has
    an answer there: ``isinstance(m, FSDPModule)`` becomes ``hasattr(m, "xla_fully_sharded")``;
    ``p.placements`` becomes ``xla_placements(p)``, a function written into the file that reads
    DTensor's placements back from the layout (``(Shard(0),)`` for FSDP2's); ``t.full_tensor()``
    becomes ``t`` (the tensor is whole; XLA gathers it when it is read); ``m.unshard()``,
    ``m.reshard()`` and the prefetch settings go, statements of their own (XLA's partitioner
    schedules the all-gathers); ``distribute_tensor(t, x.device_mesh, x.placements)``, a full tensor
    laid out as another DTensor is (the example's checkpoint loading), becomes
    ``xla_distribute_like(t, x)``, written into the file: ``t`` on the device with ``x``'s layout.
    torch.distributed.checkpoint's state-dict setters (``set_model_state_dict``,
    ``set_optimizer_state_dict``, ``set_state_dict``; the example's ``--dcp-api``) become the same
    calls of functions written into the file, ``xla_set_model_state_dict`` and its kin: the one
    process holds the whole state (torch's broadcast from rank 0 needs a process group, and its
    model on the meta device a group's device), loaded in the layouts of the program's own tensors
    (the optimizer's by torch without the broadcast, then laid out as its parameters). Left as
    written each of these raises on a plain tensor or module, as PyTorch's FSDP2 example's checks
    (``inspect_model``) and checkpoints did. It acts in FSDP2 code (a file that names
    ``FSDPModule`` or ``fully_shard`` and imports FSDP2's or DTensor's public names): where the
    file joins a group or builds a mesh, only when the family converts it; a module that does
    neither (the example's ``utils.py`` and ``checkpoint.py``, which its script imports) is part
    of the SPMD program its script becomes, under the default target and ``--target spmd``.
    ``t.to_local()`` has no SPMD form (a process holds every shard): XLA608 stays.
    """

    CODE = "XLA628"
    NAME = "dtensor-queries"
    SUMMARY = (
        "isinstance(m, FSDPModule), p.placements, t.full_tensor(), m.unshard() and the state-dict setters "
        "in the SPMD program's terms"
    )
    FIX = "safe"
    TRIGGERS = (words("FSDPModule", "placements", "full_tensor", "distribute_tensor", *SETTERS, *SCHEDULING),)
    # FSDP2 code (a script's or its helpers': PyTorch's FSDP2 example's utils.py and checkpoint.py
    # annotate with FSDPModule) that imports FSDP2's or DTensor's public names, not torch's own modules
    REQUIRES = (
        words("FSDPModule", "fully_shard"),
        r"torch\.distributed\.(?:fsdp|tensor|_composable\.fsdp)[ \t]+import\b"
        r"|import[ \t]+torch\.distributed\.(?:fsdp|tensor)\b",
    )
    BEFORE = (
        "import torch\nfrom torch.distributed.fsdp import FSDPModule\n\n\n"
        "def inspect(model):\n    assert isinstance(model, FSDPModule)\n    model.unshard()\n"
        "    return {n: p.full_tensor() for n, p in model.named_parameters()}\n"
    )
    AFTER = (
        "import torch\n\n\n"
        "def inspect(model):\n"
        '    assert hasattr(model, "xla_fully_sharded")\n'
        "    return {n: p for n, p in model.named_parameters()}\n"
    )

    @classmethod
    def whole_module(cls, text: str, settings) -> bool:
        """Where the text may set processes up, whether the family converts the file is the whole
        file's question; elsewhere each conversion reads its own statement, and a slice will do."""
        return may_shard(text)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        # a module that neither joins a group nor builds a mesh belongs to its script's program
        self.shards = self.shards or not may_shard(self.ctx.source)
        self.written = Written(self.ctx, WRITTEN, CALLS)
        self.targets = 0  # inside an assignment's target: an attribute written, not read
        self.likes = 0  # inside a distribute_tensor call that becomes xla_distribute_like
        self.distributes = self.shards and "distribute_tensor" in self.ctx.source  # (a walk a statement only then)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        return self.written.write(original, updated)

    def _uses(self, name: str, node: cst.CSTNode) -> None:
        if self.fixes(node):
            self.written.use(name)

    def _in_written(self) -> bool:
        """Whether the statement is in a function this rule wrote (``xla_set_optimizer_state_dict``
        calls torch's setter)."""
        top = self.ctx.statements[0] if self.ctx.statements else None
        return isinstance(top, cst.FunctionDef) and top.name.value in WRITTEN

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        super().visit_SimpleStatementLine(node)
        if self.distributes and any(isinstance(n, cst.Call) and self._like(n) is not None for n in subtree(node)):
            self.claim(node)  # XLA608 flags distribute_tensor: here it has an SPMD form

    def _like(self, call: cst.Call) -> str | None:
        """The code of ``x`` in ``distribute_tensor(t, x.device_mesh, x.placements)``; None otherwise."""
        if len(call.args) != 3 or any(a.star or a.keyword is not None for a in call.args):
            return None
        mesh, placements = call.args[1].value, call.args[2].value
        if not (isinstance(mesh, cst.Attribute) and isinstance(placements, cst.Attribute)):
            return None
        if mesh.attr.value != "device_mesh" or placements.attr.value != "placements":
            return None
        like = code_of(mesh.value)
        if like != code_of(placements.value) or self.qualname(call.func) not in DISTRIBUTE_TENSOR:
            return None
        return like

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets += 1

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget):
        self.targets -= 1
        return updated

    def visit_Call(self, node: cst.Call) -> None:
        if self.shards and _called(node) == "distribute_tensor" and self._like(node) is not None:
            self.likes += 1

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = _called(original) if self.shards else None
        if name in SETTERS and self.qualname(original.func) == SETTERS[name][0] and not self._in_written():
            helper = SETTERS[name][1]
            self._uses(helper, original)
            why = " (its broadcast from rank 0 has no process group to run on)" if _broadcasts(original) else ""
            return self.replace(
                original,
                updated,
                updated.with_changes(func=cst.Name(helper)),
                f"`{snippet(original)}`: the SPMD program's one process holds the whole state{why}; `{helper}`, "
                f"written into this file, loads each tensor in the layout of the program's own ({SPMD_GUIDE})",
                imports=[TORCH, XS, TORCH_XLA],
                drop_if_unused=imports_behind(self, original.func),
            )
        elif name == "distribute_tensor" and (like := self._like(original)) is not None:
            self.likes -= 1
            self.ctx.forget_fixes_inside(original)  # the placements read inside goes with the call
            self._uses(LIKE, original)
            return self.replace(
                original,
                updated,
                cst.parse_expression(f"{LIKE}({code_of(updated.args[0].value)}, {like})"),
                f"`{snippet(original)}`: a full tensor laid out as `{like}` is, in the SPMD program `{LIKE}`, "
                f"written into this file: the tensor on the device, marked with `{like}`'s layout ({SPMD_GUIDE})",
                imports=[XS, TORCH_XLA],
                drop_if_unused=imports_behind(self, original.func),
            )
        elif name == "isinstance" and len(original.args) == 2 and not original.args[1].star:
            kind = original.args[1].value
            if self.qualname(kind) in FSDP_MODULE:
                return self.replace(
                    original,
                    updated,
                    cst.parse_expression(f'hasattr({code_of(updated.args[0].value)}, "xla_fully_sharded")'),
                    f"`{snippet(original)}`: in the SPMD program a module FSDP2 shards is one `xla_fully_shard` "
                    f"was given (XLA622), which it keeps as `xla_fully_sharded` ({SPMD_GUIDE})",
                    drop_if_unused=imports_behind(self, kind),
                )
        elif name == "full_tensor" and isinstance(original.func, cst.Attribute) and not original.args:
            return self.replace(
                original,
                updated,
                updated.func.value,
                f"`{snippet(original)}`: the SPMD program's tensors are whole (XLA gathers the shards when "
                f"the tensor is read): `.full_tensor()` removed ({SPMD_GUIDE})",
            )
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if not self.shards or self.targets or self.likes or original.attr.value != "placements":
            return updated
        self._uses(HELPER, original)
        return self.replace(
            original,
            updated,
            cst.parse_expression(f"{HELPER}({code_of(updated.value)})"),
            f"`{snippet(original)}`: DTensor's placements, read back from the layout of the SPMD program's "
            f"tensor by `{HELPER}`, written into this file ({SPMD_GUIDE})",
            imports=[XS],
        )

    def plan(self, statement: cst.SimpleStatementLine) -> str | None:
        """The method of an FSDP2 scheduling call, a statement of its own (``model.unshard()``)."""
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        method = call.func.attr.value
        return method if method in SCHEDULING and (method.startswith("set_") or not call.args) else None

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, method: str):
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            cst.RemovalSentinel.REMOVE,
            f"`{snippet(original.body[0].value)}`: FSDP2's scheduling by hand; {SCHEDULING[method]}: removed "
            f"({SPMD_GUIDE})",
        )


def _called(call: cst.Call) -> str | None:
    """The name a call calls by: ``full_tensor`` for ``t.full_tensor()``, ``isinstance``."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else None


def _broadcasts(call: cst.Call) -> bool:
    """Whether ``broadcast_from_rank0=True`` is written in the call (in its options)."""
    return any(
        isinstance(n, cst.Arg)
        and n.keyword is not None
        and n.keyword.value == "broadcast_from_rank0"
        and code_of(n.value) == "True"
        for n in subtree(call)
    )
