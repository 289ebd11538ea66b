"""Start-up hook of every Python process in a verify run.

The harness puts this folder first on PYTHONPATH and sets XLA_MIGRATE_VERIFY, so the
script, and every worker it spawns (torch_xla.launch, mp.spawn), is instrumented
before any user code runs. Another sitecustomize on the path still runs first.
"""

import importlib.util
import os
import sys


def _run_the_other_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or ".")
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder != here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_sitecustomize_before_xla_migrate", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


_run_the_other_sitecustomize()
if os.environ.get("XLA_MIGRATE_VERIFY"):
    from migrate_xla.verify.child import install

    install()
