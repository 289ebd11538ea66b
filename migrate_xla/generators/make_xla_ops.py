"""Generates ``xla_ops.py``, what the installed torch_xla can run of the APIs XLA902 handles:

    .venv/bin/python -m migrate_xla.generators.make_xla_ops     (or: make xla-ops)

Unlike the rewriter, this generator imports torch and torch_xla (the ``verify`` extra), in
``main`` only: the table it writes is plain data that the rules read without them. Read
from the installed packages:

- the aten operators torch_xla registers a kernel for under the XLA dispatch key (its
  lowerings), and whether a fallback is registered for the key (torch_xla's CPU fallback:
  an operator with no lowering runs on the CPU);
- the same for the keys a sparse tensor on the device dispatches to, SparseXLA (COO) and
  SparseCsrXLA (CSR, CSC, BSR, BSC): no kernel and no fallback in torch_xla 2.9, so that no
  sparse tensor can be on the device, not even moved there;
- for each public API of ``CURATED`` (sparse tensors and the dense forms XLA902 writes for
  them), the aten operators it calls, traced on the CPU with a ``TorchDispatchMode``, the
  key each meets on the XLA device (SparseXLA when a sparse COO tensor is among its inputs
  or outputs, SparseCsrXLA for the compressed layouts, XLA otherwise) and how it runs there.

tests/test_xla_ops.py regenerates the table in a child process and compares.
"""

from __future__ import annotations

import sys
import textwrap

from migrate_xla.generators.write import GENERATED, write_generated

TABLE = GENERATED / "xla_ops.py"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.make_xla_ops  (or: make xla-ops)"

# The public APIs, each with a call on small CPU tensors whose aten operators are traced:
# S a sparse COO matrix (3 x 3), R the same in CSR, X a dense 3 x 3 matrix, D a dense 3 x 2
# one, i and v the COO indices and values, crow / col / csv the CSR ones.
SPARSE_TYPES = ("Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long")
CURATED = {
    # sparse tensors made
    "torch.sparse_coo_tensor": "torch.sparse_coo_tensor(i, v, (3, 3))",
    "torch.sparse_csr_tensor": "torch.sparse_csr_tensor(crow, col, csv, (3, 3))",
    "torch.sparse_csc_tensor": "torch.sparse_csc_tensor(crow, col, csv, (3, 3))",
    **{f"torch.sparse.{t}Tensor": f"torch.sparse.{t}Tensor(i, v, torch.Size([3, 3]))" for t in SPARSE_TYPES},
    "Tensor.to_sparse": "X.to_sparse()",
    "Tensor.to_sparse_coo": "X.to_sparse_coo()",
    "Tensor.to_sparse_csr": "X.to_sparse_csr()",
    "Tensor.to_sparse_csc": "X.to_sparse_csc()",
    # computing with them
    "torch.spmm": "torch.spmm(S, D)",
    "torch.sparse.mm": "torch.sparse.mm(S, D)",
    "torch.sparse.addmm": "torch.sparse.addmm(D, S, D)",
    "torch.sparse.sum": "torch.sparse.sum(S, 1)",
    "torch.sparse.softmax": "torch.sparse.softmax(S, 1)",
    "torch.sparse.log_softmax": "torch.sparse.log_softmax(S, 1)",
    "torch.smm": "torch.smm(S, D)",
    "torch.hspmm": "torch.hspmm(S, D)",
    "torch.sspaddmm": "torch.sspaddmm(S, S, X)",
    "Tensor.coalesce": "S.coalesce()",
    "Tensor._indices": "S._indices()",
    "Tensor._values": "S._values()",
    "Tensor._nnz": "S._nnz()",
    # the dense forms XLA902 writes
    "torch.mm": "torch.mm(X, D)",
    "torch.addmm": "torch.addmm(D, X, D)",
    "torch.sum": "torch.sum(X, 1)",
}
DENSE, COO, COMPRESSED = "XLA", "SparseXLA", "SparseCsrXLA"
COMPOSITE_KEYS = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


def read_installed() -> dict:
    """The facts ``table_text`` writes, read from the installed torch and torch_xla."""
    import warnings

    import torch
    import torch_xla
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    keys = {name: getattr(torch._C.DispatchKey, name) for name in (DENSE, COO, COMPRESSED)}
    all_ops = torch._C._dispatch_get_all_op_names()

    def kernels(key: str) -> list[str]:
        return sorted(op for op in all_ops if torch._C._dispatch_has_kernel_for_dispatch_key(op, keys[key]))

    def fallback(key: str) -> bool:
        return torch._C._dispatch_has_backend_fallback(keys[key])

    def how(op: str, key: str) -> str:
        if torch._C._dispatch_has_kernel_for_dispatch_key(op, keys[key]):
            return "kernel"
        try:
            torch._C._dispatch_get_computed_kernel_for_dispatch_key(op, keys[key])
        except RuntimeError:  # "no kernel for SparseXLA for aten::mm"
            return "none"
        if any(torch._C._dispatch_has_kernel_for_dispatch_key(op, k) for k in COMPOSITE_KEYS):
            return "composite"
        return "cpu-fallback"

    class Trace(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, str]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            layouts = {t.layout for t in tree_leaves((args, kwargs, result)) if isinstance(t, torch.Tensor)}
            key = COO if torch.sparse_coo in layouts else COMPRESSED if layouts - {torch.strided} else DENSE
            if (func.name(), key) not in self.calls:
                self.calls.append((func.name(), key))
            return result

    warnings.simplefilter("ignore")  # the legacy constructors are deprecated, CSR tensors in beta
    i, v = torch.tensor([[0, 1, 1], [1, 0, 2]]), torch.tensor([1.0, 2.0, 3.0])
    crow, col, csv = torch.tensor([0, 1, 2, 3]), torch.tensor([1, 0, 2]), torch.tensor([2.0, 1.0, 3.0])
    names = {
        "torch": torch,
        "i": i,
        "v": v,
        "crow": crow,
        "col": col,
        "csv": csv,
        "S": torch.sparse_coo_tensor(i, v, (3, 3)),
        "R": torch.sparse_csr_tensor(crow, col, csv, (3, 3)),
        "X": torch.arange(9.0).reshape(3, 3),
        "D": torch.arange(6.0).reshape(3, 2),
    }
    apis = {}
    for api, call in CURATED.items():
        trace = Trace()
        with trace:
            eval(call, names)
        apis[api] = trace.calls
    operators = {(op, key): how(op, key) for calls in apis.values() for op, key in calls}
    return {
        "torch": torch.__version__.split("+")[0],  # not the build's local label (+cu128, +cpu)
        "torch_xla": torch_xla.__version__,
        # aten's operators only: others (torchvision::nms, xla::...) depend on what else is installed
        "kernels": {key: [op for op in kernels(key) if op.startswith("aten::")] for key in keys},
        "fallback": {key: fallback(key) for key in keys},
        "operators": dict(sorted(operators.items())),
        "apis": apis,
    }


def cannot_run(facts: dict) -> list[str]:
    """The APIs an operator of which meets a key with no kernel on the device, or holds a
    sparse tensor there while the device cannot hold one (a sparse key without kernels or fallback)."""
    empty = {key for key in (COO, COMPRESSED) if not facts["kernels"][key] and not facts["fallback"][key]}
    return [
        api
        for api, calls in facts["apis"].items()
        if any(facts["operators"][call] == "none" or call[1] in empty for call in calls)
    ]


def _strings(items, indent: str) -> str:
    """Lines of ``"item",`` (what ``ruff format`` writes of a collection that does not fit one line)."""
    return "".join(f'{indent}"{item}",\n' for item in items)


def _tuple(items: list[str]) -> str:
    """A tuple of strings as ``ruff format`` writes it in a dict of this table."""
    if not items:
        return "()"
    if len(items) == 1:
        return f'("{items[0]}",)'
    return "(\n" + _strings(items, " " * 8) + "    )"


def _set(items: list[str]) -> str:
    """A frozenset of strings (a short one: the sparse keys' kernels, none so far)."""
    return "frozenset({" + ", ".join(f'"{item}"' for item in items) + "})" if items else "frozenset()"


def _packed(names: list[str], width: int = 116) -> str:
    """The names, several a line, four spaces in."""
    return textwrap.fill(
        " ".join(names), width, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False
    )


def table_text(facts: dict) -> str:
    """The text of ``xla_ops.py`` for these facts, formatted as ``ruff format`` would."""
    kernels, fallback = facts["kernels"], facts["fallback"]
    operators = "".join(f'    "{op} {key}": "{how}",\n' for (op, key), how in facts["operators"].items())
    apis = "".join(
        f'    "{api}": {_tuple([f"{op} {key}" for op, key in calls])},\n' for api, calls in facts["apis"].items()
    )
    cannot = cannot_run(facts)
    sparse = "\n".join(
        f"{name}_KERNELS = {_set(kernels[key])}\n{name}_FALLBACK = {fallback[key]}"
        for key, name in ((COO, "SPARSE_XLA"), (COMPRESSED, "SPARSE_CSR_XLA"))
    )
    return f'''"""What torch_xla {facts["torch_xla"]} can run of the APIs xla-migrate's XLA902 handles (sparse tensors).

Generated from the installed torch and torch_xla by migrate_xla/generators/make_xla_ops.py; do not
edit. Regenerate it after an upgrade of torch_xla:

    {REGENERATE}
"""

TORCH_VERSION = "{facts["torch"]}"
TORCH_XLA_VERSION = "{facts["torch_xla"]}"

# A sparse tensor on the XLA device dispatches to SparseXLA (COO) or SparseCsrXLA (CSR, CSC,
# BSR, BSC): the aten operators torch_xla registers a kernel for there, and whether it
# registers a fallback for the key. With neither, no sparse tensor can be on the device: its
# move there (adj.to(device)) raises NotImplementedError ("... from the 'SparseXLA' backend").
{sparse}

# A dense tensor dispatches to XLA: torch_xla's kernels (its lowerings) are XLA_KERNELS, at the
# end; any other operator runs through its fallback for the key, on the CPU, when XLA_FALLBACK.
XLA_FALLBACK = {fallback[DENSE]}

# How the XLA device runs each aten operator the APIs below call, with the key it meets
# there: "kernel" (torch_xla's), "composite" (torch's decomposition into other operators),
# "cpu-fallback" (torch_xla runs it on the CPU) or "none" (NotImplementedError).
OPERATORS = {{
{operators}}}

# Each public API XLA902 handles and the aten operators it calls (keys of OPERATORS), traced
# on the CPU; the operators of a composite one are not listed.
APIS = {{
{apis}}}

# The APIs the XLA device cannot run: an operator of theirs has no kernel there, or holds a
# sparse tensor, which the device cannot hold (above).
CANNOT_RUN = frozenset(
    {{
{_strings(cannot, " " * 8)}    }}
)


def runs_on_xla(api: str) -> bool | None:
    """Whether the XLA device runs ``api`` (``torch.spmm``, ``Tensor.to_sparse``); None when the table does not say."""
    return None if api not in APIS else api not in CANNOT_RUN


# The aten operators with a kernel for the XLA dispatch key ({len(kernels[DENSE])}).
XLA_KERNELS = frozenset(
    """
{_packed(kernels[DENSE])}
""".split()
)
'''


def main(argv: list[str]) -> int:
    """Writes the table (``--print``: prints it instead)."""
    if argv not in ([], ["--print"]):
        print(f"usage: {REGENERATE} [--print]", file=sys.stderr)
        return 2
    try:
        text = table_text(read_installed())
    except ImportError as exc:
        print(f"make_xla_ops: needs torch and torch_xla (the verify extra): {exc}", file=sys.stderr)
        return 1
    if argv:
        sys.stdout.write(text)
        return 0
    return write_generated(TABLE, text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
