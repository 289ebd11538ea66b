"""XLA905: a PackedSequence, which no RNN of torch_xla 2.9 runs on the XLA device, flagged at the
line that packs it."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC
from migrate_xla.rule.api import Rule, snippet, words

PACKING = frozenset(
    {
        "torch.nn.utils.rnn.pack_padded_sequence",
        "torch.nn.utils.rnn.pack_sequence",
        "torch.nn.utils.rnn.PackedSequence",
    }
)
FAILS = (
    "torch_xla 2.9 runs no RNN on a PackedSequence on the XLA device (nn.LSTM and nn.RNN raise "
    '"The tensor has a non-zero number of elements, but its data is not allocated yet", its GRU asserts '
    f'"PackedSequence is not supported"; measured on CPU PJRT, {DEFECTS_DOC})'
)
INSTEAD = (
    "give the RNN the padded batch instead: a unidirectional RNN's outputs at each sequence's own steps "
    "are the same, but its final states and a bidirectional RNN's backward direction read the padding "
    "(take each sequence's last output by its length, or run the backward direction on the sequences "
    "reversed within their lengths)"
)


class PackedSequence(Rule):
    """``pack_padded_sequence`` / ``pack_sequence`` / ``PackedSequence(...)``: flagged, since
    torch_xla cannot run an RNN on what they make.

    Measured on torch_xla 2.9.0, CPU PJRT: ``nn.LSTM`` (one or both directions) and ``nn.RNN`` on
    the XLA device called with a PackedSequence raise ``RuntimeError: The tensor has a
    non-zero number of elements, but its data is not allocated yet`` (the packed batch sizes
    are a CPU tensor the kernel reads on the device), and torch_xla's own GRU asserts
    "PackedSequence is not supported. Use a regular tensor instead."; on padded tensors all of
    them run. Sequence models written for the GPU pack their variable-length batches (a
    speech model's text encoder: NVIDIA's tacotron2, whose migrated run died at its first
    step, docs/realworld.md), and the migration cannot make the packing go without changing
    what is computed: the padded batch gives a unidirectional RNN the same outputs at each
    sequence's steps, but other final states, and a bidirectional RNN reads the padding in
    its backward direction. So the packing line is flagged with what to write, and a run
    that crashes there says so (verify names this rule). PyTorch/XLA only, as the family.
    """

    CODE = "XLA905"
    NAME = "packed-sequence"
    SUMMARY = "pack_padded_sequence / pack_sequence: no RNN of torch_xla runs on a PackedSequence; flagged"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (words("pack_padded_sequence", "pack_sequence", "PackedSequence"),)
    RUNTIMES = ("torch-xla",)
    BEFORE = (
        "from torch.nn.utils.rnn import pack_padded_sequence\n\n"
        "outputs, _ = lstm(pack_padded_sequence(x, lengths, batch_first=True))\n"
    )
    AFTER = (
        "from torch.nn.utils.rnn import pack_padded_sequence\n\n"
        f"# TODO(xla-migrate): XLA905 `pack_padded_sequence(x, lengths, batch_first=True)`: {FAILS}: {INSTEAD}\n"
        "outputs, _ = lstm(pack_padded_sequence(x, lengths, batch_first=True))\n"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname(node.func) in PACKING:
            self.flag(node, f"`{snippet(node)}`: {FAILS}: {INSTEAD}")
