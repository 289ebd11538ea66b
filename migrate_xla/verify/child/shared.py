"""What several modules of the instrumentation share: the optimizers that stepped, a
recorded value as the record holds it, which frames are the instrumentation's own, and a
patch applied when a module is first imported."""

from __future__ import annotations

import importlib.abc
import math
import sys

# this instrumentation's package (migrate_xla.verify.child): frames of its modules are not the script's
PACKAGE = __name__.rpartition(".")[0]


def _is_ours(module: str) -> bool:
    """Whether ``module`` (a frame's ``__name__``) is one of this package's."""
    return module == PACKAGE or module.startswith(PACKAGE + ".")


_live_optimizers: dict = {}  # every optimizer that stepped, in the order of its first step


def _as_float(tensor) -> float:
    value = tensor if isinstance(tensor, float) else float(tensor.float().cpu())
    return value if math.isfinite(value) else (str(value) if not math.isnan(value) else "nan")


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``patch(module)`` right after one of ``names`` is executed, once each."""

    def __init__(self, names, patch) -> None:
        self.names, self.patch, self.busy = set(names), patch, set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            import importlib.util

            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        loader, patch = spec.loader, self.patch

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                patch(module)

        spec.loader = _Loader()
        return spec


def _after_import(names, patch) -> None:
    """``patch(module)`` for each of ``names``: now if imported, else right after its import."""
    for name in names:
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, _AfterImport(names, patch))
