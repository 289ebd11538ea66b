"""XLA704: batches padded to their longest sequence: every new length is a new graph (the
migration guide's "Understanding Recompilations"). Hugging Face's padding, where the model is
handed the attention mask, pads to a multiple of PAD_MULTIPLE instead; the rest is flagged."""

from __future__ import annotations

import re

import libcst as cst

from codemods.recompilation.common import (
    DYNAMIC_SHAPES_DOC,
    RECOMPILATION_DOC,
    RECOMPILES,
    CompiledOnly,
    innermost_function,
    is_literal,
)
from migrate_xla.rule.api import ON_ACCELERATOR, UNSAFE, Rule, append_keyword, call_arg, find, snippet, string_value

PAD_SEQUENCE = "torch.nn.utils.rnn.pad_sequence"
# Hugging Face's collators that pad each batch to its longest sequence unless told otherwise
# (their ``padding`` defaults to True), all taking ``pad_to_multiple_of``
COLLATORS = frozenset(
    {
        "DataCollatorWithPadding",
        "DataCollatorForSeq2Seq",
        "DataCollatorForLanguageModeling",
        "DataCollatorForTokenClassification",
        "DataCollatorForWholeWordMask",
    }
)
# What a padded length rounds up to: a few bucket lengths (64, 128, ... up to the longest the
# data has) instead of one a batch; a multiple of the TPU's 8-row sublanes and half its 128 lanes
PAD_MULTIPLE = 64
# The model is handed the attention mask (``model(**batch)``, ``attention_mask=``, a Trainer,
# which unpacks each batch): the padding's positions are masked out of attention and their
# labels are -100 (the collators' label_pad_token_id), so more of it changes no loss
MASKED = re.compile(r"attention_mask|\(\s*\*\*|\bTrainer\b")
PAD_HINT = (
    "pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's "
    '`padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths'
)


class VariableLengthBatch(CompiledOnly, Rule):
    """Batches padded to their longest sequence: every new length is a new graph.

    Guide, "Understanding Recompilations": "Padding inputs to fixed sizes is a common
    strategy"; the recompilation document's first source of recompilations is the input
    data set. Flagged: ``torch.nn.utils.rnn.pad_sequence`` (it always pads to the
    longest sequence of the list), a call given ``padding=True`` or
    ``padding="longest"`` (a Hugging Face tokenizer or collator, matched by shape), and,
    in a function whose name says ``collate``, a ``max()`` over lengths (``max(len(s) for
    s in batch)``, ``max(lengths)``, ``lengths.max()``) that sizes the padding. Anywhere
    in the file: this code runs on the host, but it makes the shapes of the step. Report
    only: the fixed length is the user's choice.

    Fixed where the padding is Hugging Face's and the model is handed the attention mask: a
    tokenizer or processor call with ``padding=True`` / ``"longest"`` (in a file that uses
    transformers) and a padding collator (``DataCollatorWithPadding``, ``...ForSeq2Seq``,
    ``...ForLanguageModeling``, ``...ForTokenClassification``) get ``pad_to_multiple_of=64``, so
    a few bucket lengths replace one a batch. The mask takes the added positions out of
    attention and the collators label them -100, so the losses stay the same without dropout:
    measured with fixtures/examples/hf_padded_batches.py (sequences of 5 to 60 tokens,
    DataCollatorWithPadding, a tiny BERT, 8 steps): padded to the longest, 13 graphs compiled, 6
    of them in the second half of the run; with the multiple, 3 and none; the same losses in
    float64 (verify: match). The fix is unsafe, held back and marked: dropout draws its random
    masks over the padded shape, so a model with dropout trains with other masks, the same in
    distribution (that example with BERT's default 0.1: 0.689 against 0.694 at step 1).
    Where the file shows no mask handed to the model, the call is flagged: there the padding
    enters the computation.

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile``, which compiles the
    step again for each new length (the family's docstring).
    """

    CODE = "XLA704"
    NAME = "variable-length-batch"
    SUMMARY = (
        "Hugging Face padding to the longest gets pad_to_multiple_of=64 where the model takes the attention mask "
        "(unsafe: dropout's masks); "
        "pad_sequence and collate_fns padding to the longest are flagged"
    )
    FIX = UNSAFE
    MARK_HELD_BACK = True  # held back, the script still compiles a graph for every length
    SEVERITY = "warning"
    TRIGGERS = (r"pad_sequence", r"""padding\s*=\s*(True|['"]longest)""", r"collate", r"DataCollator")
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
        longest = padding is not None and (
            is_literal(padding.value, "True") or string_value(padding.value) == "longest"
        )
        collator = self._collator(original)
        # padded to the longest, by a padding= that says so or by a collator's default
        to_longest = (longest or (collator and padding is None)) and call_arg(
            original, None, "pad_to_multiple_of"
        ) is None
        if to_longest:
            # a tokenizer or processor (matched by shape) in a file that uses transformers: another
            # library's padding= may not take pad_to_multiple_of
            hugging_face = collator or "transformers" in self.ctx.source
            if hugging_face and MASKED.search(self.ctx.source) and self.matters():
                what = f"`{collator}`" if collator else f"`padding={snippet(padding.value)}`"
                return self.replace(
                    original,
                    updated,
                    append_keyword(updated, "pad_to_multiple_of", cst.Integer(str(PAD_MULTIPLE))),
                    f"{what} pads each batch to its longest sequence, a new shape and graph for every length: "
                    f"`pad_to_multiple_of={PAD_MULTIPLE}` pads to a few lengths instead (unsafe: the model takes "
                    "the attention mask, so the added padding changes no loss, but dropout draws its random "
                    "masks over the padded shape)",
                )
        if self.qualname(original.func) == PAD_SEQUENCE:
            message = "`pad_sequence` pads to the longest sequence of each batch"
        elif to_longest:
            what = f"`padding={snippet(padding.value)}`" if longest else f"`{collator}`"
            message = f"{what} pads to the longest sequence of each batch"
        elif self._is_longest_length(original):
            message = f"the collate function pads to `{snippet(original)}`, the longest sequence of the batch"
        if message is not None and self.matters():
            if self.ctx.api.lazy:
                cost, doc = " and compiles a new graph", RECOMPILATION_DOC
            else:
                cost, doc = f", and {RECOMPILES}", DYNAMIC_SHAPES_DOC
            self.flag(original, f"{message}: every new length is a new shape{cost}; {PAD_HINT}; see {doc}")
        return updated

    def _collator(self, call: cst.Call) -> str | None:
        """The name of the Hugging Face padding collator ``call`` builds, if it builds one."""
        name = self.qualname(call.func)
        last = name.rsplit(".", 1)[-1] if name else None
        return last if name and name.startswith("transformers.") and last in COLLATORS else None

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
