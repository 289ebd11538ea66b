"""XLA114: an import of a CUDA module the file never uses (``from torch import nn, optim,
cuda``) goes: on a TPU it only names CUDA."""

from __future__ import annotations

import libcst as cst

from migrate_xla.rule.api import SAFE, Rule, name_uses

CUDA_MODULES = ("torch.cuda", "torch.backends.cudnn", "torch.backends.cuda")


class UnusedCudaImport(Rule):
    """An import of ``torch.cuda`` (or cuDNN's settings) that nothing in the file uses goes.

    ``from torch import nn, optim, cuda`` is common in GPU scripts that never call
    ``cuda.*``: the name stays a CUDA reference in the migrated file, where a reader (or
    ``--check`` in a pre-commit hook) takes it for code still bound to NVIDIA GPUs. It binds
    a module and runs nothing, so removing it changes nothing. An import that the file
    uses is left to the rules that convert its uses (each removes it once unused).
    """

    CODE = "XLA114"
    NAME = "unused-cuda-import"
    SUMMARY = "imports of torch.cuda (or cudnn) that nothing uses are removed"
    FIX = SAFE
    SEVERITY = "info"
    TRIGGERS = (r"import[^\n]*\bcud(?:a|nn)\b",)
    BEFORE = "from torch import nn, optim, cuda\n\nmodel = nn.Linear(2, 2)\n"
    AFTER = "from torch import nn, optim\n\nmodel = nn.Linear(2, 2)\n"

    def visit_Module(self, node: cst.Module) -> None:
        self.uses = name_uses(node)

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        self._unused(original, [a.asname.name.value for a in original.names if a.asname is not None])
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if not isinstance(original.names, cst.ImportStar):
            # ``from torch import cuda as cuda`` re-exports the name (a package's __init__): it is used
            self._unused(
                original,
                [(a.asname.name if a.asname else a.name).value for a in original.names if not _reexport(a)],
            )
        return updated

    def _unused(self, original: cst.CSTNode, locals_: list[str]) -> None:
        for local in locals_:
            if self.ctx.aliases.get(local) not in CUDA_MODULES or self.uses[local]:
                continue
            self.ctx.need_whole_module(local)  # a use may be in code a slice left out
            spec = self.ctx.bindings.get(local)
            fixing = self.fixes(original)
            self.ctx.report(
                self,
                original,
                f"`{local}` ({self.ctx.aliases[local]}) is imported and never used: removed",
                fixed=fixing,
                drops=(spec,) if fixing and spec is not None else (),
            )


def _reexport(alias: cst.ImportAlias) -> bool:
    """``name as name``: the explicit re-export of a package's ``__init__`` (PEP 484's convention)."""
    return (
        alias.asname is not None
        and isinstance(alias.asname.name, cst.Name)
        and isinstance(alias.name, cst.Name)
        and alias.asname.name.value == alias.name.value
    )
