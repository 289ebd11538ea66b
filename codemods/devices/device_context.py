"""XLA112: ``with torch.cuda.device(i):`` selects a CUDA device for its block; an XLA
process owns one device, so the context goes and its block runs as it is (the migration
guide's "Device Handling")."""

from __future__ import annotations

import libcst as cst

from codemods.shared.device_values import ON_RUNTIME
from codemods.shared.statements import unwrap_block
from migrate_xla.rule.api import CUDA_WORD, SAFE, Rule, names_trigger, snippet

CONTEXTS = ("torch.cuda.device", "torch.cuda.device_of")


class CudaDeviceContext(Rule):
    """A ``with torch.cuda.device(i):`` block runs without the context.

    Guide, "Device Handling": each process of an XLA run owns one device,
    ``torch_xla.device()``, and what the block creates on "the current CUDA device" is
    created where the migrated code puts it (the device arguments and ``.cuda()`` calls
    inside the block are migrated by XLA101-XLA103). Left in place, the context calls
    into the CUDA driver and the run stops with "Found no NVIDIA driver". The block is
    kept, one level less indented; the context's other items stay (``with
    torch.cuda.device(0), torch.no_grad():`` keeps ``torch.no_grad()``). A context bound
    to a name (``as d``) stays, flagged by XLA899: the block may read it.
    """

    CODE = "XLA112"
    NAME = "cuda-device-context"
    SUMMARY = "with torch.cuda.device(i): drops the context and keeps its block"
    FIX = SAFE
    TRIGGERS = (names_trigger(*CONTEXTS),)
    REQUIRES = (CUDA_WORD,)
    BEFORE = "with torch.cuda.device(args.gpu):\n    model = Net().cuda()\n"
    AFTER = "model = Net().cuda()\n"  # .cuda() is XLA103's

    def leave_With(self, original: cst.With, updated: cst.With):
        selecting = [
            i
            for i, item in enumerate(original.items)
            if item.asname is None and isinstance(item.item, cst.Call) and self.qualname(item.item.func) in CONTEXTS
        ]
        if not selecting:
            return updated
        calls = [original.items[i].item for i in selecting]
        drops = [spec for call in calls for spec in self.ctx.import_behind(call.func)]
        message = (
            f"`with {', '.join(snippet(c) for c in calls)}:` selects a CUDA device for its block: on "
            f"{ON_RUNTIME[self.ctx.runtime]} each process owns one device, so the context goes and the block stays"
        )
        kept = [item for i, item in enumerate(updated.items) if i not in selecting]
        if kept:
            last = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            replacement = updated.with_changes(items=[*kept[:-1], last])
            return self.replace(original, updated, replacement, message, drop_if_unused=drops)
        statements, above = unwrap_block(updated)
        if all(_is_pass(s) for s in statements):  # with torch.cuda.device(0): pass
            return self.replace(original, updated, cst.RemovalSentinel.REMOVE, message, drop_if_unused=drops)
        statements[0] = statements[0].with_changes(leading_lines=[*above, *statements[0].leading_lines])
        return self.replace(original, updated, cst.FlattenSentinel(statements), message, drop_if_unused=drops)


def _is_pass(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in statement.body)
