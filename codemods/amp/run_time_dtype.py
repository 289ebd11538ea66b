"""XLA406: an autocast dtype named at run time (``--amp-dtype float16``) is mapped to
bfloat16 where argparse reads it (the migration guide's "Automatic Mixed Precision")."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import AMP_GUIDE
from codemods.amp.dtype_choices import GETATTR_HALF, dtype_choices
from migrate_xla.rule import SAFE, Rule, append_keyword, call_arg, code_of, string_value, words

# What the option's value passes through: float16's names for getattr(torch, ...) become bfloat16
HALF_NAMES = tuple(sorted(GETATTR_HALF))


class RunTimeAmpDtype(Rule):
    """A float16 autocast dtype given on the command line becomes bfloat16 where it is read.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively, and bfloat16
    needs no loss scaling. XLA401 maps float16 to bfloat16 where an autocast's dtype is
    chosen, an argparse default included; but a script that turns the option's string into
    the dtype with ``getattr(torch, args.amp_dtype)`` still autocasts in float16 when its
    user's launch command says ``--amp-dtype float16``, which the migration does not see.
    So the option gets a ``type=`` that maps ``float16`` (and ``half``) to ``bfloat16`` as
    argparse reads it (``"bfloat16"`` added to a literal ``choices=`` list that lacks it):
    the value given and the default alike, and every comparison with ``"float16"`` that
    enables a GradScaler then says, truly, that no float16 is used. Only where the option
    does nothing but choose an autocast's dtype (XLA401's test for mapping it where it is
    chosen); where it is used for anything else (``model.to(getattr(torch,
    args.dtype))``), XLA401 guards the autocast's own dtype instead.
    """

    CODE = "XLA406"
    NAME = "run-time-amp-dtype"
    SUMMARY = "a float16 autocast dtype given on the command line becomes bfloat16 where argparse reads it"
    FIX = SAFE
    TRIGGERS = (words("getattr"),)
    REQUIRES = (r"autocast", r"add_argument")
    CONTEXT = (r"float16|fp16|half", r"autocast")
    BEFORE = (
        'parser.add_argument("--amp-dtype", default="bfloat16")\nargs = parser.parse_args()\n'
        'with torch.autocast("cuda", dtype=getattr(torch, args.amp_dtype)):\n    loss = model(x)\n'
    )
    AFTER = (
        'parser.add_argument("--amp-dtype", default="bfloat16", type=lambda name: "bfloat16" '
        'if name in ("float16", "half") else name)\nargs = parser.parse_args()\n'
        'with torch.autocast("cuda", dtype=getattr(torch, args.amp_dtype)):\n    loss = model(x)\n'
    )

    def visit_Module(self, node: cst.Module) -> None:
        choices = dtype_choices(self.ctx, node)
        self.options: dict[int, list[str]] = {}  # id(add_argument call) -> the names it passes through
        for choice in choices.choices.values():
            if choice.mapped:
                for key in choice.options:
                    self.options.setdefault(key, []).extend(f"`{k}`" for k in choice.keys)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        through = self.options.pop(id(original), None)
        if through is None or not _maps(original):
            return updated
        flag = string_value(original.args[0].value) if original.args else None
        quote = "'" if code_of(original.args[0].value).startswith("'") else '"'
        names = ", ".join(f"{quote}{name}{quote}" for name in HALF_NAMES)
        mapping = cst.parse_expression(f"lambda name: {quote}bfloat16{quote} if name in ({names}) else name")
        kind = call_arg(original, None, "type")
        if kind is not None:
            index = next(i for i, a in enumerate(original.args) if a is kind)
            args = list(updated.args)
            args[index] = args[index].with_changes(value=mapping)
            replacement = updated.with_changes(args=args)
        else:
            replacement = append_keyword(updated, "type", mapping)
        choices = call_arg(original, None, "choices")
        added = ""
        if choices is not None and "bfloat16" not in [string_value(e.value) for e in choices.value.elements]:
            index = next(i for i, a in enumerate(original.args) if a is choices)
            listed = replacement.args[index].value
            elements = list(listed.elements)
            last = elements[-1]
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(cst.SimpleString(f"{quote}bfloat16{quote}"), comma=last.comma))
            args = list(replacement.args)
            args[index] = args[index].with_changes(value=listed.with_changes(elements=elements))
            replacement = replacement.with_changes(args=args)
            added = f", and {quote}bfloat16{quote} is one of its choices"
        return self.replace(
            original,
            updated,
            replacement,
            f"`{flag or code_of(original.args[0].value)}` names the autocast dtype at run time (through "
            f"{', '.join(dict.fromkeys(through))}): a launch command's `float16` now means bfloat16 (`type=` maps "
            f"it where argparse reads it{added}); TPUs compute in bfloat16, which needs no GradScaler; see {AMP_GUIDE}",
        )


def _maps(call: cst.Call) -> bool:
    """Whether the option's value is a plain string this rule can map: no ``type=`` but ``str``
    (a second run finds its own mapping there), one value, stored, and a literal ``choices=``."""
    if any(a.star for a in call.args) or not call.args or call.args[0].keyword is not None:
        return False
    kind = call_arg(call, None, "type")
    if kind is not None and not (isinstance(kind.value, cst.Name) and kind.value.value == "str"):
        return False
    action = call_arg(call, None, "action")
    if call_arg(call, None, "nargs") is not None or (action is not None and string_value(action.value) != "store"):
        return False
    choices = call_arg(call, None, "choices")
    if choices is None:
        return True
    return isinstance(choices.value, (cst.List, cst.Tuple, cst.Set)) and all(
        string_value(e.value) is not None for e in choices.value.elements
    )
