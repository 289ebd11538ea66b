"""XLA5xx: checkpoints written from the XLA device (the guide's "Saving and Loading Models").

Saving is this family's job. Loading is XLA108's (devices): ``torch.load`` loads to the
CPU (``map_location="cpu"``), and ``model.load_state_dict`` / ``optimizer.load_state_dict``
copy the loaded state onto the parameters' device, which is what the guide's
``model.load_state_dict(torch.load(path)); model.to(device)`` does. A run resumed that
way continues with the same numbers: measured on CPU PJRT, the losses after loading equal
those of the run that went on without stopping, bit for bit, and the resumed steps reuse
the compiled step graph (fixtures/examples/trainer_resume.py checks it end to end).

A CPU-only script (one that picks ``"cpu"`` and names no accelerator: ``rule.ON_ACCELERATOR``)
keeps ``torch.save``: ``xm.save`` would start the XLA runtime (and take the TPU) just to
write a file.

PyTorch/XLA only: under TorchTPU (``--runtime torch-tpu``) ``torch.save`` and ``torch.load``
work on its tensors as on CUDA's, and these rules do not run.
"""

from __future__ import annotations

import re

import libcst as cst

from migrate_xla.rule.api import (
    EQUAL,
    ON_ACCELERATOR,
    SAFE,
    XM,
    Rule,
    call_arg,
    children,
    code_of,
    last_name,
    names_trigger,
    parse_expr,
)

# The last name of a value that holds a whole module: model, self.model, net, netG, model.module
MODULE_NAME = re.compile(
    r"(^|_)(model|net|network|module|encoder|decoder|generator|discriminator|classifier|backbone)s?"
    r"(_?\d+|_?[a-z])?$",
    re.IGNORECASE,
)
PER_PROCESS = re.compile(r"rank|ordinal", re.IGNORECASE)
SAVE_TRIGGERS = (r"save(?<!\wsave)\(", r"import[^\n]*\bsave\b")  # torch.save(...), from torch import save as ...
STATE_DICT_CPU = "{{k: v.cpu() for k, v in {0}.items()}}"
GUIDE = "https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html"


def _appended(call: cst.Call, args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """``args`` with ``new`` last; a call laid out one argument a line stays that way."""
    between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    trailing = args[-1].comma
    if isinstance(trailing, cst.Comma):  # the new argument takes the trailing comma
        new = new.with_changes(comma=trailing)
        if isinstance(trailing.whitespace_after, cst.ParenthesizedWhitespace):
            between = cst.Comma(whitespace_after=call.whitespace_before_args)
    return [*args[:-1], args[-1].with_changes(comma=between), new]


def _identifiers(node: cst.CSTNode):
    """The names in an expression, attributes and f-string fields included, string text not."""
    if isinstance(node, cst.Name):
        yield node.value
    for child in children(node):
        yield from _identifiers(child)


def _moved_to_cpu(node: cst.CSTNode) -> bool:
    """``{k: v.cpu() for k, v in model.state_dict().items()}``: the guide's explicit CPU state."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu":
        return True
    return any(_moved_to_cpu(child) for child in children(node))


def is_whole_module(node: cst.CSTNode) -> bool:
    """``model``, ``self.net``, ``model.module``: a value named like an ``nn.Module``."""
    return isinstance(node, (cst.Name, cst.Attribute)) and bool(MODULE_NAME.search(last_name(node)))


def _module_state_dict(node: cst.CSTNode) -> bool:
    """``model.state_dict()``: the flat name -> tensor dict of a module (not an optimizer's)."""
    return (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "state_dict"
        and is_whole_module(node.func.value)
    )


class SaveWithXm(Rule):
    """``torch.save(state, path)`` becomes ``xm.save(state, path)``.

    Guide, "Saving and Loading Models": save from the CPU. ``torch.save`` of XLA tensors
    writes storages tagged with the XLA device: the file loads only where torch_xla is
    installed (elsewhere "Could not run 'aten::empty.memory_format' with arguments from
    the 'XLA' backend"). ``xm.save`` waits for the tensors, copies them to the CPU and
    then calls ``torch.save``, so the checkpoint loads anywhere; by default
    (``master_only=True``) only the master process writes, so the processes of a
    multi-process run do not all write the same file. In a single process it always
    writes (checked on CPU PJRT).

    A state already copied to the CPU by the code (``.cpu()`` in the saved expression,
    the guide's other form) is saved with ``torch.save`` as written.

    ``master_only=False`` is written where each process writes its own file: a path
    that depends on the rank or ordinal (``f"ckpt_{rank}.pt"``), or an in-memory
    ``io.BytesIO`` buffer that every process reads back. Where ``xm.save`` does not fit
    because the call passes pickling options (``pickle_protocol=``, ``pickle_module=``),
    ``torch.save`` stays and a module's ``model.state_dict()`` becomes the guide's
    explicit CPU state dict, ``{k: v.cpu() for k, v in model.state_dict().items()}``;
    other states are flagged. A whole module is XLA502's.

    ``xm.save`` rebuilds containers on the way to the CPU: tuples come back as lists,
    an ``OrderedDict`` state dict as a ``dict`` (``load_state_dict`` takes both; Adam's
    ``betas`` work as a list).

    PyTorch/XLA only: ``xm.save`` is torch_xla's; TorchTPU's tensors have storages that
    ``torch.save`` copies to the host and tags ``tpu``, as it did CUDA's, and XLA108's
    ``map_location`` reads them back anywhere.
    """

    CODE = "XLA501"
    NAME = "xm-save"
    SUMMARY = "torch.save(state, path) becomes xm.save(state, path): written from the CPU, once"
    FIX = SAFE
    TRIGGERS = SAVE_TRIGGERS
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    CONTEXT = (names_trigger("io.BytesIO"),)  # the buffers each process writes its own of
    BEFORE = 'torch.save(model.state_dict(), "model.pt")\n'
    AFTER = 'xm.save(model.state_dict(), "model.pt")\n'

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.buffers: set[str] = set()  # names bound to io.BytesIO()

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and self.qualname(node.value.func) == "io.BytesIO":
            self.buffers |= {code_of(t.target) for t in node.targets}

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.save" or any(a.star for a in original.args):
            return updated
        obj, dest = call_arg(original, 0, "obj"), call_arg(original, 1, "f")
        if obj is None or dest is None or is_whole_module(obj.value) or _moved_to_cpu(obj.value):
            return updated
        if len(original.args) > 2:
            return self._with_pickle_options(original, updated, obj)
        # xm.save(data, file_or_path): positional, in that order, each place keeping its comma
        index = {id(a): i for i, a in enumerate(original.args)}
        args = [
            updated.args[index[id(given)]].with_changes(
                keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=updated.args[place].comma
            )
            for place, given in enumerate((obj, dest))
        ]
        message = (
            "`torch.save` -> `xm.save`: the tensors are moved to the CPU first, so the file loads without torch_xla"
        )
        if self._per_process(dest.value):
            args = _appended(updated, args, cst.Arg(cst.Name("False"), keyword=cst.Name("master_only"), equal=EQUAL))
            message += f"; `master_only=False`: every process writes its own `{code_of(dest.value)}`"
        else:
            message += "; in a multi-process run only the master process writes"
        return self.replace(
            original,
            updated,
            updated.with_changes(func=parse_expr("xm.save"), args=args),
            message,
            imports=[XM],
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _per_process(self, dest: cst.BaseExpression) -> bool:
        if code_of(dest) in self.buffers:
            return True
        if isinstance(dest, cst.Call) and self.qualname(dest.func) == "io.BytesIO":
            return True
        return any(PER_PROCESS.search(name) for name in _identifiers(dest))  # rank, args.local_rank, get_rank()

    def _with_pickle_options(self, original: cst.Call, updated: cst.Call, obj: cst.Arg):
        if not _module_state_dict(obj.value):
            self.flag(
                original,
                "`torch.save` with pickling options writes XLA tensors, and `xm.save` takes no such "
                "options: move the state to the CPU first (`xm.save(state, path)` without them, or "
                f"tensors `.cpu()` by hand), see {GUIDE}",
            )
            return updated
        index = next(i for i, a in enumerate(original.args) if a is obj)
        args = list(updated.args)
        cpu_state = parse_expr(STATE_DICT_CPU.format(code_of(args[index].value)))
        args[index] = args[index].with_changes(value=cpu_state)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            "`xm.save` takes no pickling options: the state dict is copied to the CPU before `torch.save`",
        )


class WholeModuleSave(Rule):
    """``torch.save(model, path)`` of a whole module is flagged: save its state dict instead.

    Pickling the module pickles its parameters as they are, on the XLA device, even
    through ``xm.save`` (it moves plain tensors, not ``nn.Parameter``s): the file loads
    only where torch_xla is installed and the model's class can be imported. The guide
    saves ``model.state_dict()`` and loads it into a model built by the code. That means
    changing how the checkpoint is read too, so it is a person's edit. A value is taken
    for a module by its name (``model``, ``self.net``, ``netG``, ``model.module``).

    PyTorch/XLA only: under TorchTPU ``torch.save`` pickles a module's parameters as it pickled
    them on CUDA (storages copied to the host, tagged ``tpu``), so a whole-module checkpoint is
    as loadable as the script's was; the migration changes nothing about it.
    """

    CODE = "XLA502"
    NAME = "whole-module-save"
    SUMMARY = "torch.save(model, path) of a whole module is flagged: save model.state_dict()"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = SAVE_TRIGGERS
    REQUIRES = (ON_ACCELERATOR,)
    RUNTIMES = ("torch-xla",)
    BEFORE = 'torch.save(model, "model.pt")\n'
    AFTER = (
        "# TODO(xla-migrate): XLA502 `torch.save(model, ...)` pickles the whole module with its parameters "
        "on the XLA device (loadable only with torch_xla and the class's code): save `model.state_dict()` "
        f"with `xm.save` and load it with `model.load_state_dict(...)`, see {GUIDE}\n"
        'torch.save(model, "model.pt")\n'
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname(node.func) not in ("torch.save", "torch_xla.core.xla_model.save"):
            return
        obj = call_arg(node, 0, "obj" if self.qualname(node.func) == "torch.save" else "data")
        if obj is None or not is_whole_module(obj.value):
            return
        module = code_of(obj.value)
        self.flag(
            node,
            f"`{code_of(node.func)}({module}, ...)` pickles the whole module with its parameters on the XLA device "
            f"(loadable only with torch_xla and the class's code): save `{module}.state_dict()` with `xm.save` "
            f"and load it with `{module}.load_state_dict(...)`, see {GUIDE}",
        )
