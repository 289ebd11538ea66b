"""XLA704: batches padded to their longest sequence are flagged: every new length is a
new graph (the migration guide's "Understanding Recompilations")."""

from __future__ import annotations

import libcst as cst

from codemods.recompilation.common import (
    DYNAMIC_SHAPES_DOC,
    RECOMPILATION_DOC,
    RECOMPILES,
    CompiledOnly,
    innermost_function,
    is_literal,
)
from migrate_xla.rule import ON_ACCELERATOR, Rule, call_arg, find, snippet, string_value

PAD_SEQUENCE = "torch.nn.utils.rnn.pad_sequence"
PAD_HINT = (
    "pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's "
    '`padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths'
)


class VariableLengthBatch(CompiledOnly, Rule):
    """Batches padded to their longest sequence are flagged: every new length is a new graph.

    Guide, "Understanding Recompilations": "Padding inputs to fixed sizes is a common
    strategy"; the recompilation document's first source of recompilations is the input
    data set. Flagged: ``torch.nn.utils.rnn.pad_sequence`` (it always pads to the
    longest sequence of the list), a call given ``padding=True`` or
    ``padding="longest"`` (a Hugging Face tokenizer or collator, matched by shape), and,
    in a function whose name says ``collate``, a ``max()`` over lengths (``max(len(s) for
    s in batch)``, ``max(lengths)``, ``lengths.max()``) that sizes the padding. Anywhere
    in the file: this code runs on the host, but it makes the shapes of the step. Report
    only: the fixed length is the user's choice.

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, which compiles the
    step again for each new length (the family's docstring).
    """

    CODE = "XLA704"
    NAME = "variable-length-batch"
    SUMMARY = "pad_sequence, padding='longest' and collate_fns padding to the longest are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (r"pad_sequence", r"""padding\s*=\s*(True|['"]longest)""", r"collate")
    REQUIRES = (ON_ACCELERATOR,)
    BEFORE = (
        "from torch.nn.utils.rnn import pad_sequence\n"
        "def collate(batch):\n    return pad_sequence(batch, batch_first=True)\n"
    )
    AFTER = (
        "from torch.nn.utils.rnn import pad_sequence\n"
        "def collate(batch):\n"
        "    # TODO(xla-migrate): XLA704 `pad_sequence` pads to the longest sequence of each batch: "
        f"every new length is a new shape and compiles a new graph; {PAD_HINT}; see {RECOMPILATION_DOC}\n"
        "    return pad_sequence(batch, batch_first=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        message = None
        padding = call_arg(original, None, "padding")
        if self.qualname(original.func) == PAD_SEQUENCE:
            message = "`pad_sequence` pads to the longest sequence of each batch"
        elif padding is not None and (is_literal(padding.value, "True") or string_value(padding.value) == "longest"):
            message = f"`padding={snippet(padding.value)}` pads to the longest sequence of each batch"
        elif self._is_longest_length(original):
            message = f"the collate function pads to `{snippet(original)}`, the longest sequence of the batch"
        if message is not None and self.matters():
            if self.ctx.api.lazy:
                cost, doc = " and compiles a new graph", RECOMPILATION_DOC
            else:
                cost, doc = f", and {RECOMPILES}", DYNAMIC_SHAPES_DOC
            self.flag(original, f"{message}: every new length is a new shape{cost}; {PAD_HINT}; see {doc}")
        return updated

    def _is_longest_length(self, call: cst.Call) -> bool:
        function = innermost_function(self.ctx.statements)
        if function is None or "collate" not in function.name.value.lower():
            return False
        func = call.func
        if isinstance(func, cst.Name) and func.value == "max" and func.value not in self.ctx.aliases:
            return any(_mentions_length(a.value) for a in call.args)
        if isinstance(func, cst.Attribute) and func.attr.value == "max" and not call.args:
            return _mentions_length(func.value)
        return False


def _mentions_length(node: cst.CSTNode) -> bool:
    """``len(s) for s in batch``, ``map(len, batch)``, ``lengths``, ``seq_lens``."""
    return find(node, lambda n: isinstance(n, cst.Name) and "len" in n.value.lower()) is not None
