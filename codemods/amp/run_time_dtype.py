"""XLA406: an autocast dtype named at run time (``--amp-dtype float16``) is mapped to
bfloat16 where argparse reads it (the migration guide's "Automatic Mixed Precision")."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import NEVER_TAKEN, amp_guide
from codemods.amp.dtype_choices import dtype_choices, mappable_option
from codemods.shared.device_values import KEPT_CUDA_CHECKS
from migrate_xla.rule.api import SAFE, Rule, append_keyword, call_arg, code_of, snippet, string_value

# What the option's value passes through: float16's names for getattr(torch, ...) become bfloat16


class RunTimeAmpDtype(Rule):
    """A float16 autocast dtype given on the command line becomes bfloat16 where it is read.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively, and bfloat16
    needs no loss scaling. XLA401 maps float16 to bfloat16 where an autocast's dtype is
    chosen, an argparse default included; but a script that turns the option's string into
    the dtype with ``getattr(torch, args.amp_dtype)`` still autocasts in float16 when its
    user's launch command says ``--amp-dtype float16``, which the migration does not see.
    So the option gets a ``type=`` that maps ``float16`` (and ``half``) to ``bfloat16`` as
    argparse reads it (``"bfloat16"`` added to a literal ``choices=`` list that lacks it):
    the value given and the default alike. An option that picks the dtype through a table
    (``PRECISIONS[args.precision]``, whose float16 XLA401 maps) is mapped to the table's own
    bfloat16 key (``fp16`` to ``bf16`` for a table keyed so), which picks what the float16
    key now picks. Every comparison with ``"float16"`` that enables a GradScaler then says,
    truly, that no float16 is used; the branches that such a comparison, or a test of a
    scaler made only in them (``scaler is not None``), can no longer take go (``if
    args.amp_dtype == "float16": scaler = GradScaler()``; ``GradScaler() if args.amp_dtype
    == "float16" else None``): their GradScaler is never made. Only where the option does
    nothing but choose an autocast's dtype (XLA401's test for mapping it where it is
    chosen); where it is used for anything else (``model.to(getattr(torch, args.dtype))``),
    XLA401 guards the autocast's own dtype instead.
    """

    CODE = "XLA406"
    NAME = "run-time-amp-dtype"
    SUMMARY = "a float16 autocast dtype given on the command line becomes bfloat16 where argparse reads it"
    FIX = SAFE
    TRIGGERS = (r"add_argument",)
    REQUIRES = (r"autocast",)
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
        # id(add_argument call) -> the names it passes through, the renames that keep its pick valid
        self.options: dict[int, tuple[list[str], dict[str, str]]] = {}
        for choice in choices.choices.values():
            if choice.mapped:
                for option, renames in choice.options.values():
                    through, merged = self.options.setdefault(id(option), ([], {}))
                    through.extend(f"`{k}`" for k in choice.keys)
                    merged.update(renames)
        self.never = choices.never
        if choices.dead:
            self.ctx.shared[NEVER_TAKEN] = choices.dead  # the scaler analysis: no scaler is made there
            kept = self.ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})  # XLA899: they go, CUDA or not
            kept.update(dict.fromkeys(choices.dead, "a branch no run takes once the dtype option is mapped"))

    # -- the branches the mapped option never takes -------------------------------------
    def _dropped(self, original, gone: cst.CSTNode | None, kept: cst.CSTNode | None, value: bool):
        test = original.test
        if gone is not None:
            self.ctx.forget_fixes_inside(gone)
        return (
            f"`{snippet(test)}` is always {value} once the dtype option is mapped to bfloat16 where it "
            f"is read: {'its branch' if not value else 'the other branch'}, which makes or uses a GradScaler, "
            f"goes; bfloat16 needs no loss scaling; see {amp_guide(self.ctx)}"
        )

    def leave_If(self, original: cst.If, updated: cst.If):
        value = self.never.get(id(original.test))
        if value is None:
            return updated
        gone, kept = (original.orelse, updated.body) if value else (original.body, updated.orelse)
        message = self._dropped(original, gone, kept, value)
        if kept is None:
            replacement = cst.RemoveFromParent()
        elif isinstance(kept, cst.If):  # elif
            replacement = cst.FlattenSentinel([kept.with_changes(leading_lines=original.leading_lines)])
        else:
            block = kept.body if isinstance(kept, cst.Else) else kept
            if isinstance(block, cst.SimpleStatementSuite):
                statements = [cst.SimpleStatementLine(body=block.body)]
            else:
                statements = list(block.body)
            statements[0] = statements[0].with_changes(
                leading_lines=[*original.leading_lines, *statements[0].leading_lines]
            )
            replacement = cst.FlattenSentinel(statements)
        return self.replace(original, updated, replacement, message)

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        value = self.never.get(id(original.test))
        if value is None:
            return updated
        gone, kept = (original.orelse, updated.body) if value else (original.body, updated.orelse)
        return self.replace(original, updated, kept, self._dropped(original, gone, kept, value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        option = self.options.pop(id(original), None)
        if option is None or not mappable_option(original):
            return updated
        through, renames = option
        flag = string_value(original.args[0].value) if original.args else None
        quote = "'" if code_of(original.args[0].value).startswith("'") else '"'
        mapping = cst.parse_expression(f"lambda name: {_mapping(renames, quote)}")
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
        listed_values = [string_value(e.value) for e in choices.value.elements] if choices is not None else []
        missing = [v for v in dict.fromkeys(renames.values()) if v not in listed_values]
        if choices is not None and missing:
            index = next(i for i, a in enumerate(original.args) if a is choices)
            listed = replacement.args[index].value
            elements = list(listed.elements)
            last = elements[-1]
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for n, value in enumerate(missing):
                comma = last.comma if n == len(missing) - 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                elements.append(cst.Element(cst.SimpleString(f"{quote}{value}{quote}"), comma=comma))
            args = list(replacement.args)
            args[index] = args[index].with_changes(value=listed.with_changes(elements=elements))
            replacement = replacement.with_changes(args=args)
            listed_missing = ", ".join(f"{quote}{v}{quote}" for v in missing)
            added = f", and {listed_missing} {'is one' if len(missing) == 1 else 'are some'} of its choices"
        meaning = "; ".join(
            " and ".join(f"`{k}`" for k in sorted(k for k, v in renames.items() if v == target))
            + f" now {'means' if list(renames.values()).count(target) == 1 else 'mean'} `{target}`"
            for target in dict.fromkeys(renames.values())
        )
        return self.replace(
            original,
            updated,
            replacement,
            f"`{flag or code_of(original.args[0].value)}` names the autocast dtype at run time (through "
            f"{', '.join(dict.fromkeys(through))}): in a launch command, {meaning} (`type=` maps "
            f"it where argparse reads it{added}); TPUs compute in bfloat16, which needs no GradScaler; see {amp_guide(self.ctx)}",
        )


def _mapping(renames: dict[str, str], quote: str) -> str:
    """The body of the ``type=`` lambda that applies ``renames`` to ``name``."""
    q = quote
    targets = set(renames.values())
    if len(targets) == 1:
        (target,) = targets
        sources = sorted(renames)
        test = (
            f"== {q}{sources[0]}{q}" if len(sources) == 1 else "in (" + ", ".join(f"{q}{k}{q}" for k in sources) + ")"
        )
        return f"{q}{target}{q} if name {test} else name"
    table = ", ".join(f"{q}{k}{q}: {q}{v}{q}" for k, v in sorted(renames.items()))
    return f"{{{table}}}.get(name, name)"
