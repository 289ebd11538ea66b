"""XLA405: float16 chosen outside autocast becomes bfloat16 (unsafe; the migration guide's
"Automatic Mixed Precision")."""

from __future__ import annotations

import re

import libcst as cst

from codemods.amp.common import BFLOAT16, CUDA_CUSTOM, HALF, arg_index, autocast_view, torch_module
from codemods.amp.dtype_choices import dtype_choices
from codemods.shared.device_values import target_name
from migrate_xla.rule.api import UNSAFE, FileContext, Rule, call_arg, code_of, parse_expr, snippet, string_value

PRECISION_NAME = re.compile(r"dtype|precision", re.IGNORECASE)
# A statement that keeps a half-precision copy rather than computing in it: its held-back
# `.half()` is the hint it was (a saved or exported format)
KEPT_FORMAT = re.compile(r"\b(save|export|onnx|state_dict|numpy|tobytes|jit)\b")
HALF_STRINGS = {"float16": "bfloat16", "fp16": "bf16"}


class Float16ToBfloat16(Rule):
    """float16 chosen outside autocast becomes bfloat16.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively; GPU code picks
    float16 because "only certain GPUs have bfloat16 support". Rewritten: ``torch.float16``
    and ``torch.half`` (in ``.to(...)``, ``dtype=`` and dtype tables such as
    ``{"float16": torch.float16}[dtype]``), ``x.half()`` -> ``x.to(torch.bfloat16)``,
    ``x.type(torch.cuda.HalfTensor)`` -> ``x.to(torch_xla.device(), torch.bfloat16)`` (the run's
    device: ``torch.device("tpu")`` under ``--runtime torch-tpu``), and
    config strings that choose float16 for a name that says dtype or precision
    (``dtype = "float16"``, an argparse default, a dict entry, a parameter default) ->
    ``"bfloat16"`` (``"fp16"`` -> ``"bf16"``). ``torch.cuda.is_bf16_supported()`` is true on
    TPU: XLA105 makes it ``True``. Unsafe: outside autocast the intent of float16 is not
    always speed (a saved half-precision format, an exported model, a dtype check), so a
    person confirms it. Where float16 only chooses the dtype of a CUDA autocast (nanoGPT's
    ``dtype`` string and ``ptdtype`` table), XLA401 maps it, safely, and this rule keeps off.

    Held back (no ``--unsafe-fixes``), a ``.half()`` / ``.type(torch.cuda.HalfTensor)``
    conversion is marked with a TODO comment naming bfloat16, not only reported: the
    migrated script still runs, but computes in float16, which is not the TPU's type (a
    CIFAR ResNet's ``--half``: ``model.half()``, ``criterion.half()``, ``input.half()``), and a
    hint alone left that silent. Not where the statement keeps a half-precision copy rather
    than computing in it (``torch.save(model.half().state_dict(), ...)``, an export), nor the
    dtype names and strings, whose intent is as often a format.
    """

    CODE = "XLA405"
    NAME = "float16-to-bfloat16"
    SUMMARY = "float16 dtypes, .half() and float16 config strings become bfloat16"
    FIX = UNSAFE
    TRIGGERS = (r"float16|\.half\b|HalfTensor|fp16",)
    BEFORE = 'model = Net().half()\nx = x.to(torch.float16)\nparser.add_argument("--dtype", default="float16")\n'
    AFTER = 'model = Net().to(torch.bfloat16)\nx = x.to(torch.bfloat16)\nparser.add_argument("--dtype", default="bfloat16")\n'

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.autocast_dtypes: set[int] = set()  # autocast's dtype and custom_fwd's cast_inputs: XLA401 decides
        self.beside_bfloat16: set[int] = set()  # float16 listed with bfloat16: the code handles both already

    def visit_Module(self, node: cst.Module) -> None:
        self.choices = dtype_choices(self.ctx, node)  # where XLA401 maps an autocast's float16

    def _keep_half_beside_bfloat16(self, operands) -> None:
        """``(torch.float16, torch.bfloat16)``, ``{torch.float16: ..., torch.bfloat16: ...}``,
        ``dtype == torch.float16 or dtype == torch.bfloat16``, ``f(torch.half, torch.bfloat16)``:
        code written for both half types. Rewritten, it would list bfloat16 twice (a dict's
        keys would collide)."""
        names = {id(node): self.qualname(node) for node in operands}
        if BFLOAT16 in names.values():
            self.beside_bfloat16 |= {key for key, name in names.items() if name in HALF}

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._keep_half_beside_bfloat16([e.value for e in node.elements])

    visit_List = visit_Set = visit_Tuple

    def visit_IfExp(self, node: cst.IfExp) -> None:
        # XLA401's guard, ``torch.bfloat16 if dtype == torch.float16 else dtype``
        test = node.test
        compared = [test.left, *(c.comparator for c in test.comparisons)] if isinstance(test, cst.Comparison) else []
        self._keep_half_beside_bfloat16([node.body, *compared])

    def visit_Dict(self, node: cst.Dict) -> None:
        self._keep_half_beside_bfloat16([e.key for e in node.elements if isinstance(e, cst.DictElement)])

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        operands, todo = [], [node]
        while todo:
            part = todo.pop()
            if isinstance(part, cst.BooleanOperation):
                todo += [part.left, part.right]
            elif isinstance(part, cst.Comparison):
                operands += [part.left, *(c.comparator for c in part.comparisons)]
        self._keep_half_beside_bfloat16(operands)

    def visit_Call(self, node: cst.Call) -> None:
        self._keep_half_beside_bfloat16([a.value for a in node.args if not a.keyword])  # f(torch.half, torch.bfloat16)
        view = autocast_view(self.ctx, node)  # the call itself, or partial(torch.autocast, ...)'s arguments
        if view is not None:
            dtype = call_arg(view, 1, "dtype")
        elif self.qualname(node.func) in CUDA_CUSTOM:
            dtype = call_arg(node, None, "cast_inputs")
        else:
            return
        if dtype is not None:
            self.autocast_dtypes.add(id(dtype.value))

    def _bfloat16(self, original, updated, replacement, imports=(), conversion=False):
        """The fix; a ``conversion`` (``.half()``) held back is marked in the code, unless its
        statement keeps a half-precision copy (KEPT_FORMAT)."""
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        self.MARK_HELD_BACK = conversion and not (statement is not None and KEPT_FORMAT.search(code_of(statement)))
        marked = self.MARK_HELD_BACK and not self.fixes(original)
        try:
            return self.replace(
                original,
                updated,
                replacement,
                f"`{snippet(original)}` -> `{snippet(replacement)}`: TPUs compute in bfloat16 natively"
                + (", and float16 is not their type: as written, the script computes in it" if marked else "")
                + " (unsafe: check that nothing needs float16 here, such as a saved half-precision format)",
                imports=imports,
            )
        finally:
            self.MARK_HELD_BACK = False  # the class's: other fixes held back are hints

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if (
            self.qualname(original) not in HALF
            or id(original) in self.autocast_dtypes
            or id(original) in self.beside_bfloat16
            or id(original) in self.choices.sites
        ):
            return updated
        return self._bfloat16(original, updated, updated.with_changes(attr=cst.Name("bfloat16")))

    def _half_string(self, original: cst.CSTNode | None, updated: cst.CSTNode | None, name: str):
        """``updated`` with "float16" made "bfloat16" if ``name`` says dtype or precision."""
        value = string_value(original) if original is not None and id(original) not in self.choices.sites else None
        if value not in HALF_STRINGS or not PRECISION_NAME.search(name) or not isinstance(original, cst.SimpleString):
            return updated
        quote = original.quote
        replacement = cst.SimpleString(f"{original.prefix}{quote}{HALF_STRINGS[value]}{quote}")
        return self._bfloat16(original, updated, replacement)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        name = " ".join(target_name(t.target) for t in original.targets)
        return _with_value(updated, "value", self._half_string(original.value, updated.value, name))

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        value = self._half_string(original.value, updated.value, target_name(original.target))
        return _with_value(updated, "value", value)

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement):
        return _with_value(
            updated, "value", self._half_string(original.value, updated.value, string_value(original.key) or "")
        )

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        return _with_value(
            updated, "default", self._half_string(original.default, updated.default, original.name.value)
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not isinstance(func, cst.Attribute):
            return updated
        method = func.attr.value
        if method == "half" and not original.args and self.qualname(original.func) is None:
            bfloat16, imports = self._bfloat16_arg()
            replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=[bfloat16])
            return self._bfloat16(original, updated, replacement, imports, conversion=True)
        if (
            method == "type"
            and len(original.args) == 1
            and self.qualname(original.args[0].value) == "torch.cuda.HalfTensor"
        ):
            bfloat16, imports = self._bfloat16_arg()
            args = [cst.Arg(parse_expr(self.ctx.api.device)), bfloat16]
            replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
            self.ctx.forget_fixes_inside(original)
            return self._bfloat16(
                original,
                updated,
                replacement,
                list(dict.fromkeys([*self.ctx.api.imports, *imports])),
                conversion=True,
            )
        if method != "add_argument":
            return updated
        option = call_arg(original, 0, None)
        index = arg_index(original, None, "default")
        if option is not None and index is not None:
            value = self._half_string(
                original.args[index].value, updated.args[index].value, string_value(option.value) or ""
            )
            if value is updated.args[index].value:
                return updated
            args = list(updated.args)
            args[index] = args[index].with_changes(value=value)
            return updated.with_changes(args=args)
        return updated

    def _bfloat16_arg(self) -> tuple[cst.Arg, list]:
        """``torch.bfloat16`` as an argument, as this file spells torch, and the import it needs."""
        torch, imports = torch_module(self.ctx)
        return cst.Arg(parse_expr(f"{torch}.bfloat16")), imports


def _with_value(node: cst.CSTNode, name: str, value: cst.CSTNode | None) -> cst.CSTNode:
    """``node`` with its field ``name`` set to ``value``; ``node`` itself when that is its value
    already (an unchanged node is not rebuilt: no code is generated for an unchanged file)."""
    return node if getattr(node, name) is value else node.with_changes(**{name: value})
